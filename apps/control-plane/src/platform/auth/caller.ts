export const ROLES = ['admin', 'operator', 'user', 'auditor'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as proven by a verified token. */
export type Caller = { sub: string; roles: Role[]; clusters: string[] };

export const isRole = (value: unknown): value is Role =>
  typeof value === 'string' && (ROLES as readonly string[]).includes(value);

/** Whether the caller holds any of `roles` (a list the caller keeps: none is built per check). */
export const hasRole = (caller: Caller, roles: readonly Role[]): boolean => {
  for (const role of caller.roles) if (roles.includes(role)) return true;
  return false;
};

export const ADMIN: readonly Role[] = ['admin'];
const OPERATOR: readonly Role[] = ['operator'];
/** Roles that read every owner's sessions and billing. */
const READS_ALL: readonly Role[] = ['admin', 'auditor'];

export const isPrivileged = (caller: Caller): boolean => hasRole(caller, ADMIN);

/** Admins and auditors read every owner's sessions and billing; anyone else only their own. */
export const readsEveryOwner = (caller: Caller): boolean => hasRole(caller, READS_ALL);

/** An operator reports only for the clusters named in its token; an admin for any. */
export const mayReportFor = (caller: Caller, clusterId: string): boolean =>
  isPrivileged(caller) || (hasRole(caller, OPERATOR) && caller.clusters.includes(clusterId));

/**
 * The one format of an owner: a token's `sub`, a session's owner, a pool's tenant, an owner
 * filter. 1-256 characters (code points), no control character (C0, DEL, C1), no whitespace at
 * either end; anything else goes (e-mail addresses with `+`, names with spaces, Unicode).
 */
export const OWNER_FORMAT = /^(?=\S)\P{Cc}{1,256}(?<=\S)$/u;
export const OWNER_RULE =
  'must be 1-256 characters, with no control characters and no whitespace at either end';

export const isOwner = (value: unknown): value is string =>
  typeof value === 'string' && OWNER_FORMAT.test(value);
