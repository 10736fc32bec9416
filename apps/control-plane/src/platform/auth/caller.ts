export const ROLES = ['admin', 'operator', 'user', 'auditor'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as proven by a verified token. */
export type Caller = { sub: string; roles: Role[]; clusters: string[] };

export const isRole = (value: unknown): value is Role =>
  typeof value === 'string' && (ROLES as readonly string[]).includes(value);

export const hasRole = (caller: Caller, ...roles: Role[]): boolean =>
  caller.roles.some((role) => roles.includes(role));

export const isPrivileged = (caller: Caller): boolean => hasRole(caller, 'admin');

/** An operator reports only for the clusters named in its token; an admin for any. */
export const mayReportFor = (caller: Caller, clusterId: string): boolean =>
  isPrivileged(caller) || (hasRole(caller, 'operator') && caller.clusters.includes(clusterId));
