import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Cause, assertNever } from '@fleet/kernel';
import { SessionDemand } from '../nodes';
import { SessionEvent, TerminationReason, sessionCodec } from './session.events';

export const SESSIONS = 'sessions';

/**
 * The event that put a session in the queue (its SessionRequested or SessionResumeRequested):
 * the queue pass places the session as a command caused by it, in its correlation.
 */
export type QueuedBy = { readonly eventId: string; readonly correlationId: string };

export const queuedByOf = (cause: Cause): QueuedBy => ({
  eventId: cause.eventId,
  correlationId: cause.metadata.correlationId,
});

export type SessionDoc = {
  _id: string;
  _rev: number;
  sessionId: string;
  owner: string;
  kind: 'gpu' | 'cpu';
  demand: SessionDemand;
  poolId: string | null;
  status: 'queued' | 'running' | 'paused' | 'terminated';
  nodeId: string | null;
  gpus: string[];
  terminationReason: TerminationReason | null;
  createdAt: string;
  /** Queue order: 0 for sessions displaced by a drain, 1 for the rest; then queuedAt. */
  queueRank: number;
  queuedAt: string | null;
  /**
   * Set while queued. Absent from documents a version before it projected (MongoDB until
   * `npm run rebuild`); the queue pass then finds the event in the session's stream.
   */
  queuedBy?: QueuedBy | null;
  drainId: string | null;
};

/** The Sessions read model after one event (`stored`: its id and metadata): pure. */
export const projectSession = (
  doc: SessionDoc | null,
  event: SessionEvent,
  revision: number,
  stored: Cause,
): SessionDoc | null => {
  if (event.type === 'SessionRequested') {
    const d = event.data;
    return {
      _id: d.sessionId,
      _rev: revision,
      sessionId: d.sessionId,
      owner: d.owner,
      kind: d.demand.kind,
      demand: d.demand,
      poolId: d.poolId,
      status: 'queued',
      nodeId: null,
      gpus: [],
      terminationReason: null,
      createdAt: d.requestedAt,
      queueRank: 1,
      queuedAt: d.requestedAt,
      queuedBy: queuedByOf(stored),
      drainId: null,
    };
  }
  if (!doc) return null;
  const next = (patch: Partial<SessionDoc>): SessionDoc => ({ ...doc, ...patch, _rev: revision });
  switch (event.type) {
    case 'SessionStarted':
    case 'SessionResumed':
      return next({
        status: 'running',
        nodeId: event.data.nodeId,
        gpus: [...event.data.gpus],
        queuedAt: null,
        queuedBy: null,
        drainId: null,
      });
    case 'SessionPaused':
      return next({ status: 'paused', nodeId: null, gpus: [], drainId: event.data.drainId });
    case 'SessionResumeRequested':
      return next({
        status: 'queued',
        queueRank: event.data.displaced ? 0 : 1,
        queuedAt: event.data.at,
        queuedBy: queuedByOf(stored),
        drainId: event.data.drainId,
      });
    case 'SessionTerminated':
      // A terminated session keeps the node and cards of its last segment, for the record.
      return next({
        status: 'terminated',
        terminationReason: event.data.reason,
        queuedAt: null,
        queuedBy: null,
      });
    default:
      return assertNever(event, 'session event');
  }
};

export const sessionsProjection: Projection = {
  name: 'sessions',
  collections: [
    {
      name: SESSIONS,
      indexes: [
        'status',
        'owner',
        'nodeId',
        // The sorts (MongoDB): GET /v1/sessions by creation, over everyone's or filtered by
        // owner, status or node; the queue by rank, then time queued.
        { createdAt: 1, _id: 1 },
        { owner: 1, createdAt: 1, _id: 1 },
        { status: 1, createdAt: 1, _id: 1 },
        { nodeId: 1, createdAt: 1, _id: 1 },
        { status: 1, queueRank: 1, queuedAt: 1, _id: 1 },
      ],
    },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('session-')) return;
    const event = sessionCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('session-'.length);
    const doc = await writer.get<SessionDoc>(SESSIONS, id);
    if (doc && stored.revision <= doc._rev) return; // redelivered
    const next = projectSession(doc, event, stored.revision, stored);
    if (next) writer.upsert(SESSIONS, next);
  },
};
