import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { StoredEvent } from '@fleet/eventstore/port';
import { toNotification } from '../notifications';
import { poolDecider } from './pool.decider';
import { PoolDefinition, PoolEvent } from './pool.events';

const spec = deciderSpec(poolDecider);
const at = '2026-12-02T10:00:00.000Z';
const definition: PoolDefinition = {
  poolId: 'p1',
  clusterId: 'c1',
  name: 'l40s-a',
  kind: 'gpu',
  gpuType: 'L40S',
  mode: 'dedicated',
  spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 1 },
  tenants: [],
  autoscaling: { min: 1, max: 6 },
};
const created: PoolEvent = { type: 'NodePoolCreated', data: { ...definition, at } };
const begin = (operationId: string, desiredSize: number | null = 3, type = 'scale_node_pool') => ({
  type: 'BeginPoolOperation' as const,
  data: {
    operationId,
    operationType: type as 'scale_node_pool' | 'delete_node_pool',
    desiredSize,
    at,
  },
});
const started = (operationId: string, type = 'scale_node_pool'): PoolEvent => ({
  type: 'NodePoolOperationStarted',
  data: { poolId: 'p1', operationId, operationType: type as 'scale_node_pool', at },
});

describe('node pool', () => {
  it('is created once', () => {
    spec.given([]).when({ type: 'CreateNodePool', data: created.data }).then([created]);
    spec.given([created]).when({ type: 'CreateNodePool', data: created.data }).thenNothing();
  });

  describe('when an operation runs', () => {
    it('refuses a second one with operation_in_progress; the same one again is a no-op', () => {
      spec
        .given([created])
        .when(begin('o1'))
        .then([started('o1')]);
      spec
        .given([created, started('o1')])
        .when(begin('o2'))
        .thenRefuses('operation_in_progress');
      spec
        .given([created, started('o1')])
        .when(begin('o1'))
        .thenNothing();
    });
    it('takes the next one once it ended; a stale end changes nothing', () => {
      const ended: PoolEvent = {
        type: 'NodePoolOperationEnded',
        data: { poolId: 'p1', operationId: 'o1', at },
      };
      spec
        .given([created, started('o1'), ended])
        .when(begin('o2'))
        .then([started('o2')]);
      spec
        .given([created, started('o2')])
        .when({ type: 'EndPoolOperation', data: { operationId: 'o1', at } })
        .thenNothing();
    });
  });

  it('refuses sizes outside the autoscaling bounds', () => {
    spec.given([created]).when(begin('o1', 7)).thenRefuses('size_out_of_range');
    spec.given([created]).when(begin('o1', 0)).thenRefuses('size_out_of_range');
    spec
      .given([created])
      .when(begin('o1', 6))
      .then([started('o1')]);
  });

  it('is deleting while its deletion runs, and takes no scale then', () => {
    const deleting = [created, started('d1', 'delete_node_pool')];
    expect(spec.given(deleting).state.status).toBe('deleting');
    spec.given(deleting).when(begin('o2')).thenRefuses('operation_in_progress');
    spec
      .given(deleting)
      .when({ type: 'MarkPoolDeleted', data: { at } })
      .then([{ type: 'NodePoolDeleted', data: { poolId: 'p1', clusterId: 'c1', at } }]);
    spec.given([]).when(begin('o1')).thenRefuses('not_found');
  });

  it('changes its node shape once a resize finished; the same shape is no change', () => {
    spec
      .given([created])
      .when({ type: 'ChangePoolSpec', data: { cpu: 32, memoryGiB: 128, at } })
      .then([
        {
          type: 'NodePoolSpecChanged',
          data: { poolId: 'p1', spec: { ...definition.spec, cpu: 32, memoryGiB: 128 }, at },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'ChangePoolSpec', data: { cpu: 16, memoryGiB: 64, at } })
      .thenNothing();
  });

  describe('when a dedicated GPU pool loses its last card', () => {
    const emptied = {
      type: 'MarkPoolEmptied' as const,
      data: { nodeId: 'n1', hostname: 'h1', at },
    };
    it('raises NodePoolEmptied, a pool_emptied notification', () => {
      const events = spec.given([created]).when(emptied).thenEvents();
      expect(events).toEqual([
        {
          type: 'NodePoolEmptied',
          data: { poolId: 'p1', clusterId: 'c1', name: 'l40s-a', nodeId: 'n1', hostname: 'h1', at },
        },
      ]);
      const stored = {
        eventId: 'e1',
        type: 'NodePoolEmptied.v1',
        data: events[0].data,
      } as unknown as StoredEvent;
      expect(toNotification(stored)).toMatchObject({
        type: 'pool_emptied',
        clusterId: 'c1',
        nodeId: 'n1',
        hostname: 'h1',
      });
    });
    it('stays quiet for a shared pool or one being deleted', () => {
      const shared: PoolEvent = {
        type: 'NodePoolCreated',
        data: { ...definition, mode: 'shared', at },
      };
      spec.given([shared]).when(emptied).thenNothing();
      spec
        .given([created, started('d1', 'delete_node_pool')])
        .when(emptied)
        .thenNothing();
    });
  });
});
