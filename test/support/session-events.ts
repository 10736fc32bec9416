import { randomUUID } from 'node:crypto';
import { EventStore, NewEvent } from '@fleet/eventstore/port';
import {
  Placement,
  SessionEvent,
  sessionCodec,
  sessionStreamId,
} from '../../apps/control-plane/src/sessions/session.events';

/** Session facts written straight to the log, as the sessions feature would decide them. */
export const placement = (over: Partial<Placement> = {}): Placement => ({
  nodeId: 'n1',
  hostname: 'gpu-a-01',
  gpus: ['GPU-1', 'GPU-2'],
  cpu: 0,
  memoryGiB: 0,
  units: 2,
  gpuModel: 'L40S',
  unitPricePerHour: 3600,
  currency: 'KRW',
  ...over,
});

/** The steps of a session's life, each with its time; `sessionId` is filled in. */
export type Step =
  | { requested: string; owner: string }
  | { started: string; placement?: Placement }
  | { paused: string }
  | { resumeRequested: string }
  | { resumed: string; placement?: Placement }
  | { terminated: string; endedAt?: string; reason?: 'user' | 'node_offline' };

export const sessionEvent = (sessionId: string, step: Step): SessionEvent => {
  if ('requested' in step) {
    return {
      type: 'SessionRequested',
      data: {
        sessionId,
        owner: step.owner,
        demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 2 },
        poolId: null,
        requestedAt: step.requested,
      },
    };
  }
  if ('started' in step) {
    return {
      type: 'SessionStarted',
      data: { sessionId, ...(step.placement ?? placement()), at: step.started },
    };
  }
  if ('resumed' in step) {
    return {
      type: 'SessionResumed',
      data: { sessionId, ...(step.placement ?? placement()), at: step.resumed },
    };
  }
  if ('paused' in step) {
    return {
      type: 'SessionPaused',
      data: { sessionId, reason: 'user', drainId: null, at: step.paused },
    };
  }
  if ('resumeRequested' in step) {
    return {
      type: 'SessionResumeRequested',
      data: { sessionId, displaced: false, drainId: null, at: step.resumeRequested },
    };
  }
  return {
    type: 'SessionTerminated',
    data: {
      sessionId,
      reason: step.reason ?? 'user',
      endedAt: step.endedAt ?? step.terminated,
      at: step.terminated,
    },
  };
};

export const storedSessionEvent = (event: SessionEvent, eventId = randomUUID()): NewEvent => {
  const at =
    'at' in event.data ? event.data.at : (event.data as { requestedAt: string }).requestedAt;
  return {
    eventId,
    type: sessionCodec.storedType(event),
    data: event.data,
    metadata: {
      correlationId: `corr-${randomUUID()}`,
      causationId: `cause-${randomUUID()}`,
      actor: { sub: 'system', roles: ['system'] },
      occurredAt: at,
      schemaVersion: 1,
    },
  };
};

/** Appends each step as its own append (as separate commands would), returning the event ids. */
export const appendSession = async (
  store: EventStore,
  sessionId: string,
  steps: readonly Step[],
): Promise<string[]> => {
  const ids: string[] = [];
  for (const step of steps) {
    const stored = storedSessionEvent(sessionEvent(sessionId, step));
    await store.append(sessionStreamId(sessionId), [stored], 'any');
    ids.push(stored.eventId);
  }
  return ids;
};
