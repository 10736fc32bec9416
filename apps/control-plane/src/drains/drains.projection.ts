import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DrainMode } from '../nodes';
import { DrainOutcome, drainCodec } from './drain.workflow';

export const DRAINS = 'drains';

export type DrainDoc = {
  _id: string;
  _rev: number;
  drainId: string;
  nodeId: string;
  mode: DrainMode;
  status: 'running' | 'completed';
  outcome: DrainOutcome | null;
  relocated: string[];
  queued: string[];
  terminated: string[];
  startedAt: string;
  endedAt: string | null;
};

export const drainsProjection: Projection = {
  name: 'drains',
  // The running drains, in `_id` order (MongoDB; the embedded store scans its few drains).
  collections: [{ name: DRAINS, indexes: [{ status: 1, _id: 1 }] }],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('drain-')) return;
    const event = drainCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('drain-'.length);
    const doc = await writer.get<DrainDoc>(DRAINS, id);
    if (doc && stored.revision <= doc._rev) return;
    if (event.type === 'DrainStarted') {
      const d = event.data;
      writer.upsert(DRAINS, {
        _id: d.drainId,
        _rev: stored.revision,
        drainId: d.drainId,
        nodeId: d.nodeId,
        mode: d.mode,
        status: 'running',
        outcome: null,
        relocated: [],
        queued: [],
        terminated: [],
        startedAt: d.at,
        endedAt: null,
      });
      return;
    }
    if (!doc) return;
    const next: DrainDoc = { ...doc, _rev: stored.revision };
    switch (event.type) {
      case 'DrainRelocationStarted':
      case 'DrainTerminationStarted':
      case 'DrainTerminationSkipped':
        break;
      case 'DrainRelocationFinished':
        if (event.data.outcome === 'relocated')
          next.relocated = [...doc.relocated, event.data.sessionId];
        if (event.data.outcome === 'queued') next.queued = [...doc.queued, event.data.sessionId];
        break;
      case 'DrainSessionTerminated':
        next.terminated = [...doc.terminated, event.data.sessionId];
        break;
      case 'DrainEnded':
        next.status = 'completed';
        next.outcome = event.data.outcome;
        next.endedAt = event.data.at;
        break;
    }
    writer.upsert(DRAINS, next);
  },
};
