import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { assertNever } from '@fleet/kernel';
import { PoolDefinition, PoolOperationType, poolCodec } from './pool.events';

export const NODE_POOLS = 'node_pools';

export type PoolDoc = Omit<PoolDefinition, 'tenants'> & {
  _id: string;
  _rev: number;
  access: { tenants: string[] };
  status: 'active' | 'deleting' | 'deleted';
  operation: { operationId: string; type: PoolOperationType } | null;
  createdAt: string;
  deletedAt: string | null;
};

export const nodePoolsProjection: Projection = {
  name: 'node-pools',
  collections: [
    {
      name: NODE_POOLS,
      // The sorts (MongoDB): a cluster's pools by name (and the name check), or by pool id;
      // the active pools by pool id.
      indexes: [
        { clusterId: 1, name: 1, _id: 1 },
        { clusterId: 1, poolId: 1, _id: 1 },
        { status: 1, poolId: 1, _id: 1 },
      ],
    },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('pool-')) return;
    const event = poolCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('pool-'.length);
    const doc = await writer.get<PoolDoc>(NODE_POOLS, id);
    if (doc && stored.revision <= doc._rev) return;
    if (event.type === 'NodePoolCreated') {
      const { at, tenants, ...definition } = event.data;
      writer.upsert(NODE_POOLS, {
        ...definition,
        _id: id,
        _rev: stored.revision,
        access: { tenants: [...tenants] },
        status: 'active',
        operation: null,
        createdAt: at,
        deletedAt: null,
      } satisfies PoolDoc);
      return;
    }
    if (!doc) return;
    const next: { -readonly [K in keyof PoolDoc]: PoolDoc[K] } = {
      ...doc,
      _rev: stored.revision,
    };
    switch (event.type) {
      case 'NodePoolOperationStarted':
        next.operation = { operationId: event.data.operationId, type: event.data.operationType };
        if (event.data.operationType === 'delete_node_pool') next.status = 'deleting';
        break;
      case 'NodePoolOperationEnded':
        next.operation = null;
        if (doc.status === 'deleting') next.status = 'active';
        break;
      case 'NodePoolDeleted':
        next.status = 'deleted';
        next.deletedAt = event.data.at;
        break;
      case 'NodePoolSpecChanged':
        next.spec = event.data.spec;
        break;
      case 'PoolAutoscalingChanged':
        next.autoscaling = event.data.autoscaling;
        break;
      case 'PoolAccessChanged':
        next.access = { tenants: [...event.data.tenants] };
        break;
      case 'NodePoolEmptied':
        break;
      default:
        assertNever(event, 'node pool event');
    }
    writer.upsert(NODE_POOLS, next);
  },
};
