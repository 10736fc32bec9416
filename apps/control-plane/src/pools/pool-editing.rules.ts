import { DomainError } from '@fleet/kernel';
import { AUTOSCALE_DEFAULTS, Autoscaling, PoolDefinition, PoolEvent } from './pool.events';

/** What a PATCH asks of autoscaling: on or off, and any bounds or timings to change with it. */
export type AutoscalingChange = {
  /** Absent: as it is (a pool without autoscaling: on). */
  readonly enabled?: boolean;
  readonly min?: number;
  readonly max?: number;
  readonly queueWaitSec?: number;
  readonly idleCooldownSec?: number;
};

/** The largest pool the API takes (the create and scale DTOs' bound). */
export const MAX_POOL_SIZE = 1000;

type EditablePool = PoolDefinition & {
  readonly status: 'active' | 'deleting' | 'deleted';
  readonly operationType: string | null;
};

const invalid = (field: string, problem: string): DomainError =>
  new DomainError('validation_failed', `${field} ${problem}`, 'invalid', {
    fields: [{ field, problems: [problem] }],
  });

/** A pool being deleted (or gone) takes no edits: 409 pool_not_active. */
export const refuseUnlessEditable = (pool: EditablePool): void => {
  if (pool.status === 'active' && pool.operationType !== 'delete_node_pool') return;
  const status = pool.status === 'active' ? 'deleting' : pool.status;
  throw new DomainError(
    'pool_not_active',
    `node pool ${pool.name} (${pool.poolId}) is ${status}`,
    'conflict',
    { poolId: pool.poolId, status },
  );
};

/**
 * The pool's autoscaling after the change: the given fields over the current ones (a pool
 * without autoscaling needs both bounds), held to 0 ≤ min ≤ max, 1 ≤ max ≤ 1000. Off keeps
 * the bounds, so turning it on again needs none.
 */
export const nextAutoscaling = (
  current: Autoscaling | null,
  change: AutoscalingChange,
): Autoscaling => {
  const min = change.min ?? current?.min;
  const max = change.max ?? current?.max;
  if (min === undefined) {
    throw invalid('autoscaling.min', 'is required: the pool has no autoscaling bounds yet');
  }
  if (max === undefined) {
    throw invalid('autoscaling.max', 'is required: the pool has no autoscaling bounds yet');
  }
  if (!Number.isInteger(min) || min < 0 || min > MAX_POOL_SIZE) {
    throw invalid('autoscaling.min', `must be an integer from 0 to ${MAX_POOL_SIZE}`);
  }
  if (!Number.isInteger(max) || max < 1 || max > MAX_POOL_SIZE) {
    throw invalid('autoscaling.max', `must be an integer from 1 to ${MAX_POOL_SIZE}`);
  }
  if (min > max) {
    throw invalid('autoscaling.min', `must not exceed autoscaling.max (${max})`);
  }
  return {
    enabled: change.enabled ?? (current === null || current.enabled !== false),
    min,
    max,
    queueWaitSec: change.queueWaitSec ?? current?.queueWaitSec ?? AUTOSCALE_DEFAULTS.queueWaitSec,
    idleCooldownSec:
      change.idleCooldownSec ?? current?.idleCooldownSec ?? AUTOSCALE_DEFAULTS.idleCooldownSec,
  };
};

const sameAutoscaling = (a: Autoscaling | null, b: Autoscaling): boolean =>
  a !== null &&
  (a.enabled !== false) === b.enabled &&
  a.min === b.min &&
  a.max === b.max &&
  (a.queueWaitSec ?? AUTOSCALE_DEFAULTS.queueWaitSec) === b.queueWaitSec &&
  (a.idleCooldownSec ?? AUTOSCALE_DEFAULTS.idleCooldownSec) === b.idleCooldownSec;

/**
 * PATCH: PoolAutoscalingChanged and PoolAccessChanged for what changes (nothing for what is
 * already so); any refusal refuses the whole edit.
 */
export const decideEdit = (
  pool: EditablePool,
  edit: { autoscaling?: AutoscalingChange; tenants?: readonly string[]; at: string },
): PoolEvent[] => {
  refuseUnlessEditable(pool);
  const { poolId } = pool;
  const events: PoolEvent[] = [];
  if (edit.autoscaling) {
    const autoscaling = nextAutoscaling(pool.autoscaling, edit.autoscaling);
    if (!sameAutoscaling(pool.autoscaling, autoscaling)) {
      events.push({ type: 'PoolAutoscalingChanged', data: { poolId, autoscaling, at: edit.at } });
    }
  }
  if (edit.tenants) {
    const tenants = [...new Set(edit.tenants)];
    const same =
      tenants.length === pool.tenants.length && tenants.every((t, i) => t === pool.tenants[i]);
    if (!same) events.push({ type: 'PoolAccessChanged', data: { poolId, tenants, at: edit.at } });
  }
  return events;
};
