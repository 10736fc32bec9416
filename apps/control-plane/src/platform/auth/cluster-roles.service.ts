import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DomainError } from '@fleet/kernel/errors';
import { Caller } from './caller';
import { ClusterRole, accessToAny, clusterAccess, passesWithoutMembership } from './cluster-access';
import { ClusterRoleAnswer, ClusterRoleOf } from './cluster-queries';

const READ = { needs: 'viewer', reads: true } as const;

/**
 * The cluster-role table for what names its clusters in its own record (a mesh request's
 * two), where the route guard cannot see them: `hidden` is the 404 of the thing itself, the
 * same as when it does not exist.
 */
@Injectable()
export class ClusterRoles {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  /**
   * The caller reads the thing when it may read any of `clusters`, else `hidden`; to act it
   * needs `act.needs` on any of `act.clusters`, else 403.
   */
  async check(
    caller: Caller,
    clusters: readonly string[],
    hidden: () => DomainError,
    act?: { readonly needs: ClusterRole; readonly clusters: readonly string[] },
  ): Promise<void> {
    const demand = act ? { needs: act.needs, reads: false } : READ;
    if (passesWithoutMembership(caller, demand)) return;
    const roles = new Map<string, ClusterRoleAnswer>();
    for (const clusterId of new Set([...clusters, ...(act?.clusters ?? [])])) {
      roles.set(
        clusterId,
        await this.queries.execute<ClusterRoleOf, ClusterRoleAnswer>(
          new ClusterRoleOf(caller.sub, clusterId),
        ),
      );
    }
    const read = accessToAny(
      clusters.map((c) => clusterAccess(caller, READ, roles.get(c) ?? null)),
    );
    if (read === 'not_found') throw hidden();
    if (!act) return;
    const acts = act.clusters.map((c) => clusterAccess(caller, demand, roles.get(c) ?? null));
    if (accessToAny(acts) !== 'allow') {
      throw new DomainError('forbidden', `this action needs the ${act.needs} role`, 'forbidden');
    }
  }
}
