import { SessionDemand } from '../nodes';

/** What a session asks of the pool it names: the owner it runs for, and its demand. */
export type PoolRequest = {
  readonly poolId: string;
  readonly owner: string;
  readonly demand: SessionDemand;
  /** `create` names the pool; `resume` finds it in the paused session, so a pool gone is a conflict. */
  readonly use: 'create' | 'resume';
};

/**
 * Which pools an owner may place sessions in. Until node pools exist every node is open to
 * all; the pools feature provides the real rule under this token.
 */
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

export const POOL_ACCESS = Symbol('POOL_ACCESS');

export const openPoolAccess: PoolAccess = {
  mayUse: async () => true,
  admit: async () => undefined,
  gone: async () => false,
};
