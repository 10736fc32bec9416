import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { OperationState, evolveOperation } from './operation.decider';
import { operationCodec } from './operation.events';

export const OPERATIONS = 'operations';

export type OperationDoc = Extract<OperationState, { operationId: string }> & {
  _id: string;
  _rev: number;
};

/** The Operations screen: the operation's own folded state, so the view and the decider agree. */
export const operationsProjection: Projection = {
  name: 'operations',
  collections: [
    {
      name: OPERATIONS,
      // The sorts (MongoDB): GET /v1/operations newest first, over every operation or filtered
      // by pool, cluster, type or status.
      indexes: [
        { operationType: 1, requestedAt: -1, _id: 1 },
        { requestedAt: -1, _id: 1 },
        { poolId: 1, requestedAt: -1, _id: 1 },
        { clusterId: 1, requestedAt: -1, _id: 1 },
        { status: 1, requestedAt: -1, _id: 1 },
      ],
    },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('operation-')) return;
    const event = operationCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('operation-'.length);
    const doc = await writer.get<OperationDoc>(OPERATIONS, id);
    if (doc && stored.revision <= doc._rev) return;
    if (!doc && event.type !== 'OperationRequested') return;
    const { _id: _i, _rev: _r, ...state } = doc ?? { _id: id, _rev: -1, status: 'absent' as const };
    const next = evolveOperation(state as OperationState, event);
    if (next.status === 'absent') return;
    writer.upsert(OPERATIONS, { ...next, _id: id, _rev: stored.revision });
  },
};
