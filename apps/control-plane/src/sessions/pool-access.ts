import type { PoolAccess } from '../pools';

export type { PoolAccess, PoolRequest } from '../pools';

/**
 * Which pools an owner may place sessions in: the pools slice's rule (PoolAccessRule, pool-access.service.ts) under
 * this token, or every node open to all where no pools exist (specs).
 */
export const POOL_ACCESS = Symbol('POOL_ACCESS');

export const openPoolAccess: PoolAccess = {
  mayUse: async () => true,
  admit: async () => undefined,
  gone: async () => false,
};
