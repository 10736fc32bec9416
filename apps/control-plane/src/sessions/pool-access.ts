/**
 * Which pools an owner may place sessions in. Until node pools exist every node is open to
 * all; the pools feature provides the real rule under this token.
 */
export interface PoolAccess {
  mayUse(owner: string, poolId: string | null): Promise<boolean>;
}

export const POOL_ACCESS = Symbol('POOL_ACCESS');

export const openPoolAccess: PoolAccess = { mayUse: async () => true };
