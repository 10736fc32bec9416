import { DomainError, notFound } from '@fleet/kernel';
import type { SessionDemand } from '../nodes';
import type { ClusterRole } from '../platform/auth/cluster-access';
import type { PoolState } from './pool.decider';

/** What a session asks of the pool it names: the owner it runs for, and its demand. */
export type PoolRequest = {
  readonly poolId: string;
  readonly owner: string;
  readonly demand: SessionDemand;
  /** `create` names the pool; `resume` finds it in the paused session, so a pool gone is a conflict. */
  readonly use: 'create' | 'resume';
};

/** Which pools an owner may place sessions in (sessions ask it under their POOL_ACCESS token). */
export interface PoolAccess {
  mayUse(owner: string, poolId: string | null): Promise<boolean>;
  /**
   * Refuses (throws a DomainError) a session that could never be placed in the pool it names,
   * judged from the pool's own stream: one that does not exist, is going, takes the other kind
   * or GPU model, or is not open to the owner. A session waiting forever is the alternative.
   */
  admit(request: PoolRequest): Promise<void>;
  /** Whether the pool is deleted (or never existed): a session pinned to it can never run. */
  gone(poolId: string): Promise<boolean>;
}

/**
 * The members of a pool's cluster, as far as access goes: whether it has any, and the
 * owner's role there. A cluster without members leaves its pools open.
 */
export type ClusterMembers = { readonly any: boolean; readonly role: ClusterRole | null };
export const NO_MEMBERS: ClusterMembers = { any: false, role: null };

/**
 * Whether `owner` may run sessions in the pool: its tenant list when it has one (the pool's
 * `access` says who); else, in a cluster with members, its owners and editors ("deploy
 * workloads"); else everyone.
 */
export const poolOpenTo = (
  tenants: readonly string[],
  owner: string,
  members: ClusterMembers,
): boolean => {
  if (tenants.length > 0) return tenants.includes(owner);
  if (!members.any) return true;
  return members.role === 'owner' || members.role === 'editor';
};

/**
 * Why a session can never be placed in the pool it names, or null when it can: pure, from
 * the pool's own state and its cluster's members. Creating names the pool, so an unknown or deleted one is 404; a
 * paused session resuming into a pool deleted meanwhile is a conflict (the session exists).
 */
export const poolRefusal = (
  pool: PoolState,
  request: PoolRequest,
  members: ClusterMembers = NO_MEMBERS,
): DomainError | null => {
  const { poolId, owner, demand, use } = request;
  if (pool.status === 'absent' || pool.status === 'deleted') {
    if (use === 'create') return notFound('node pool', poolId);
    return new DomainError(
      'pool_not_active',
      `node pool ${poolId} of this session ${pool.status === 'absent' ? 'does not exist' : 'was deleted'}`,
      'conflict',
      { poolId, status: pool.status },
    );
  }
  if (!poolOpenTo(pool.tenants, owner, members)) {
    // Only the id the caller sent: the pool's name is not for someone it is closed to.
    return new DomainError(
      'forbidden',
      `node pool ${poolId} is not open to ${owner}`,
      'forbidden',
      { poolId, owner },
    );
  }
  if (pool.status !== 'active') {
    return new DomainError(
      'pool_not_active',
      `node pool ${pool.name} (${poolId}) is ${pool.status}`,
      'conflict',
      { poolId, status: pool.status },
    );
  }
  const wrongKind = pool.kind !== demand.kind;
  const wrongModel =
    demand.kind === 'gpu' && pool.gpuType !== null && pool.gpuType !== demand.gpuModel;
  if (wrongKind || wrongModel) {
    const wanted = demand.kind === 'gpu' ? `a ${demand.gpuModel} gpu session` : 'a cpu session';
    const takes = pool.kind === 'gpu' ? `${pool.gpuType ?? 'gpu'} sessions` : 'cpu sessions';
    return new DomainError(
      'pool_mismatch',
      `node pool ${pool.name} (${poolId}) takes ${takes}, not ${wanted}`,
      'conflict',
      { poolId, poolKind: pool.kind, gpuType: pool.gpuType },
    );
  }
  return null;
};
