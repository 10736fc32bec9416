import { Caller, hasRole } from './caller';

export const CLUSTER_ROLES = ['owner', 'editor', 'viewer'] as const;
/** A member's role on one cluster (API.md, "Clusters as tenants"). */
export type ClusterRole = (typeof CLUSTER_ROLES)[number];

export const isClusterRole = (value: unknown): value is ClusterRole =>
  typeof value === 'string' && (CLUSTER_ROLES as readonly string[]).includes(value);

const RANK: Readonly<Record<ClusterRole, number>> = { viewer: 1, editor: 2, owner: 3 };

/** Whether `role` includes what `needs` may do (owner ⊇ editor ⊇ viewer). */
export const roleCovers = (role: ClusterRole, needs: ClusterRole): boolean =>
  RANK[role] >= RANK[needs];

/** What a cluster-scoped route asks: the role it needs, and whether it only reads. */
export type ClusterDemand = { readonly needs: ClusterRole; readonly reads: boolean };

export type ClusterAccess = 'allow' | 'not_found' | 'forbidden';

const ADMIN = ['admin'] as const;
const AUDITOR = ['auditor'] as const;

/**
 * The one table of API.md: admin passes everything, an auditor every read; anyone else as
 * its membership says. `role` is the caller's role on the cluster, null when it is no member
 * or there is no such cluster: both are 404, so a non-member learns nothing of the cluster.
 * A member below the route's role is 403.
 */
export const clusterAccess = (
  caller: Caller,
  demand: ClusterDemand,
  role: ClusterRole | null,
): ClusterAccess => {
  if (hasRole(caller, ADMIN)) return 'allow';
  if (role !== null) {
    if (roleCovers(role, demand.needs)) return 'allow';
    return demand.reads && hasRole(caller, AUDITOR) ? 'allow' : 'forbidden';
  }
  if (hasRole(caller, AUDITOR)) return demand.reads ? 'allow' : 'forbidden';
  return 'not_found';
};

/** Whether the caller skips the membership lookup altogether (nothing to ask the slices). */
export const passesWithoutMembership = (caller: Caller, demand: ClusterDemand): boolean =>
  hasRole(caller, ADMIN) || (demand.reads && hasRole(caller, AUDITOR));

/**
 * Over several clusters (a mesh request's two): allowed by any one; else forbidden where the
 * caller is a member of any; else not found.
 */
export const accessToAny = (answers: readonly ClusterAccess[]): ClusterAccess => {
  if (answers.includes('allow')) return 'allow';
  return answers.includes('forbidden') ? 'forbidden' : 'not_found';
};
