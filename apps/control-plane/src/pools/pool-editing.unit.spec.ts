import fc from 'fast-check';
import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { PoolCommand, poolDecider } from './pool.decider';
import { PoolDefinition, PoolEvent } from './pool.events';

const spec = deciderSpec(poolDecider);
const at = '2026-12-02T10:00:00.000Z';
const definition: PoolDefinition = {
  poolId: 'p1',
  clusterId: 'c1',
  name: 'l40s-a',
  kind: 'gpu',
  gpuType: 'L40S',
  mode: 'shared',
  spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 1 },
  tenants: [],
  autoscaling: { min: 1, max: 6, queueWaitSec: 60, idleCooldownSec: 600 },
};
const created: PoolEvent = { type: 'NodePoolCreated', data: { ...definition, at } };
const fixed: PoolEvent = {
  type: 'NodePoolCreated',
  data: { ...definition, autoscaling: null, at },
};
const edit = (data: Omit<Extract<PoolCommand, { type: 'EditNodePool' }>['data'], 'at'>) => ({
  type: 'EditNodePool' as const,
  data: { ...data, at },
});
const changed = (autoscaling: object): PoolEvent => ({
  type: 'PoolAutoscalingChanged',
  data: {
    poolId: 'p1',
    autoscaling: { enabled: true, queueWaitSec: 60, idleCooldownSec: 600, ...autoscaling } as never,
    at,
  },
});
const beginScale = (desiredSize: number) => ({
  type: 'BeginPoolOperation' as const,
  data: { operationId: 'o1', operationType: 'scale_node_pool' as const, desiredSize, at },
});

describe('node pool editing', () => {
  describe('when autoscaling changes', () => {
    it('records the new bounds over the current ones', () => {
      spec
        .given([created])
        .when(edit({ autoscaling: { min: 3 } }))
        .then([changed({ min: 3, max: 6 })]);
      spec
        .given([created])
        .when(edit({ autoscaling: { enabled: true, max: 2 } }))
        .then([changed({ min: 1, max: 2 })]);
    });

    it('changes nothing when asked for what it already is', () => {
      spec
        .given([created])
        .when(edit({ autoscaling: { enabled: true, min: 1, max: 6 } }))
        .thenNothing();
    });

    it('holds 0 ≤ min ≤ max and 1 ≤ max ≤ 1000, naming the field', () => {
      const refuses = (autoscaling: object, field: string, problems?: string[]) =>
        spec
          .given([created])
          .when(edit({ autoscaling }))
          .thenRefuses('validation_failed', {
            fields: [problems ? { field, problems } : { field }],
          });
      refuses({ min: 7 }, 'autoscaling.min', ['must not exceed autoscaling.max (6)']);
      refuses({ min: 0, max: 0 }, 'autoscaling.max');
      refuses({ min: -1 }, 'autoscaling.min');
      refuses({ max: 1001 }, 'autoscaling.max');
    });

    it('needs both bounds on a pool that had no autoscaling', () => {
      spec
        .given([fixed])
        .when(edit({ autoscaling: { enabled: true, min: 1 } }))
        .thenRefuses('validation_failed', { fields: [{ field: 'autoscaling.max' }] });
      spec
        .given([fixed])
        .when(edit({ autoscaling: { min: 0, max: 2 } }))
        .then([changed({ min: 0, max: 2 })]);
    });

    it('can be turned off, keeping its bounds, and on again without them', () => {
      const off = changed({ enabled: false, min: 1, max: 6 });
      spec
        .given([created])
        .when(edit({ autoscaling: { enabled: false } }))
        .then([off]);
      spec
        .given([created, off])
        .when(edit({ autoscaling: { enabled: true } }))
        .then([changed({ min: 1, max: 6 })]);
      // Off: a manual scale is no longer held to the bounds.
      spec.given([created]).when(beginScale(9)).thenRefuses('size_out_of_range');
      expect(spec.given([created, off]).when(beginScale(9)).thenEvents()).toHaveLength(1);
    });

    it('never records bounds outside the invariants (any change, any pool)', () => {
      const size = fc.integer({ min: -2, max: 1002 });
      fc.assert(
        fc.property(
          fc.record({ enabled: fc.boolean(), min: size, max: size }, { requiredKeys: [] }),
          fc.boolean(),
          (change, hadBounds) => {
            let events: readonly PoolEvent[];
            try {
              events = poolDecider.decide(
                edit({ autoscaling: change }),
                spec.given([hadBounds ? created : fixed]).state,
              );
            } catch {
              return;
            }
            for (const e of events) {
              if (e.type !== 'PoolAutoscalingChanged') continue;
              const { min, max } = e.data.autoscaling;
              expect(0 <= min && min <= max && max >= 1 && max <= 1000).toBe(true);
            }
          },
        ),
      );
    });
  });

  describe('when access changes', () => {
    it('records the tenants, each once; the same list is no change', () => {
      spec
        .given([created])
        .when(edit({ tenants: ['alice', 'bob', 'alice'] }))
        .then([
          { type: 'PoolAccessChanged', data: { poolId: 'p1', tenants: ['alice', 'bob'], at } },
        ]);
      spec
        .given([created])
        .when(edit({ tenants: [] }))
        .thenNothing();
      const state = spec.given([
        created,
        { type: 'PoolAccessChanged', data: { poolId: 'p1', tenants: ['alice'], at } },
      ]).state;
      expect(state.status !== 'absent' && state.tenants).toEqual(['alice']);
    });

    it('refuses the whole edit when one part is refused', () => {
      spec
        .given([created])
        .when(edit({ tenants: ['alice'], autoscaling: { min: 9 } }))
        .thenRefuses('validation_failed');
    });
  });

  it('refuses an edit of a pool being deleted (pool_not_active) or unknown (not_found)', () => {
    const deleting: PoolEvent = {
      type: 'NodePoolOperationStarted',
      data: { poolId: 'p1', operationId: 'd1', operationType: 'delete_node_pool', at },
    };
    spec
      .given([created, deleting])
      .when(edit({ tenants: ['alice'] }))
      .thenRefuses('pool_not_active', { poolId: 'p1', status: 'deleting' });
    spec
      .given([])
      .when(edit({ tenants: [] }))
      .thenRefuses('not_found');
  });
});
