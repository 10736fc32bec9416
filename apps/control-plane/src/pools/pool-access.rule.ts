import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { DomainError, notFound } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, roleOn } from '../clusters';
import type { SessionDemand } from '../nodes';
import { ClusterRole } from '../platform/auth/cluster-access';
import { READ_MODELS } from '../platform/runtime/tokens';
import { PoolState, poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';

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
const NO_MEMBERS: ClusterMembers = { any: false, role: null };

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

/**
 * Who may place sessions in a pool (poolOpenTo). Nodes in no pool, and pools this process
 * never created, stay open. A cluster's members are read from its read model, settled after
 * every change, so a change holds from the next placement.
 */
@Injectable()
export class PoolAccessRule implements PoolAccess {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  async mayUse(owner: string, poolId: string | null): Promise<boolean> {
    if (poolId === null) return true;
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    if (state.status === 'absent') return true;
    if (state.tenants.length > 0) return state.tenants.includes(owner);
    return poolOpenTo(state.tenants, owner, await this.members(state.clusterId, owner));
  }

  private async members(clusterId: string, owner: string): Promise<ClusterMembers> {
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!doc?.members?.length) return NO_MEMBERS;
    return { any: true, role: roleOn(doc, owner) };
  }

  async gone(poolId: string): Promise<boolean> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    return state.status === 'absent' || state.status === 'deleted';
  }

  async admit(request: PoolRequest): Promise<void> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(request.poolId));
    const members =
      state.status === 'absent' || state.tenants.length > 0
        ? NO_MEMBERS
        : await this.members(state.clusterId, request.owner);
    const refusal = poolRefusal(state, request, members);
    if (refusal) throw refusal;
  }
}
