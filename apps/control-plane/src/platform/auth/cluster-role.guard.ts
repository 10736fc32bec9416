import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { QueryBus } from '@nestjs/cqrs';
import { DomainError } from '@fleet/kernel/errors';
import {
  ClusterDemand,
  ClusterRole,
  clusterAccess,
  passesWithoutMembership,
} from './cluster-access';
import {
  ClusterOfAnswer,
  ClusterOfOperation,
  ClusterOfPool,
  ClusterRoleAnswer,
  ClusterRoleOf,
} from './cluster-queries';
import { Roles, RequestWithCaller } from './decorators';

/** How a route names its cluster: the `:clusterId` itself, or a pool or operation in it. */
export type ClusterFrom = 'cluster' | 'pool' | 'operation';

type ClusterScope = ClusterDemand & { readonly from: ClusterFrom };

const CLUSTER_SCOPE_KEY = 'auth:clusterScope';

const PARAM: Readonly<Record<ClusterFrom, string>> = {
  cluster: 'clusterId',
  pool: 'poolId',
  operation: 'operationId',
};

/** The 404 of a cluster, pool or operation the caller may not see: the same as a missing one. */
const hidden = (from: ClusterFrom, id: string): DomainError => {
  const what = from === 'pool' ? 'node pool' : from;
  return new DomainError('not_found', `${what} ${id} does not exist`, 'not_found', { id });
};

/**
 * Checks the caller's role on the cluster a route names, after the AuthGuard admitted the
 * caller. Thin: the decision is `clusterAccess`; the lookups are queries the owning slices
 * answer from their read models, settled after every change, so a membership change holds
 * from the next request.
 */
@Injectable()
export class ClusterRoleGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.reflector.get<ClusterScope | undefined>(
      CLUSTER_SCOPE_KEY,
      context.getHandler(),
    );
    const request = context
      .switchToHttp()
      .getRequest<RequestWithCaller & { params?: Record<string, string> }>();
    const caller = request.caller;
    if (!scope || !caller) throw new Error('ClusterRoleGuard runs on @ClusterScoped routes only');
    if (passesWithoutMembership(caller, scope)) return true;
    const id = request.params?.[PARAM[scope.from]] ?? '';
    const clusterId = await this.clusterOf(scope.from, id);
    const role =
      clusterId === null
        ? null
        : await this.queries.execute<ClusterRoleOf, ClusterRoleAnswer>(
            new ClusterRoleOf(caller.sub, clusterId),
          );
    const access = clusterAccess(caller, scope, role);
    if (access === 'not_found') throw hidden(scope.from, id);
    if (access === 'forbidden') {
      throw new DomainError(
        'forbidden',
        `this action needs the ${scope.needs} role on the cluster`,
        'forbidden',
      );
    }
    return true;
  }

  private clusterOf(from: ClusterFrom, id: string): Promise<ClusterOfAnswer> {
    if (from === 'cluster') return Promise.resolve(id);
    const query = from === 'pool' ? new ClusterOfPool(id) : new ClusterOfOperation(id);
    return this.queries.execute<ClusterOfPool | ClusterOfOperation, ClusterOfAnswer>(query);
  }
}

/**
 * A cluster-scoped route: open to admin, to auditors when it reads, and to users (members)
 * as far as their role on the route's cluster covers `needs`. `from` says where the route
 * names the cluster.
 */
export const ClusterScoped = (
  needs: ClusterRole,
  from: ClusterFrom = 'cluster',
  options: { reads?: boolean } = {},
): MethodDecorator => {
  const reads = options.reads ?? needs === 'viewer';
  return applyDecorators(
    Roles(...(reads ? (['admin', 'auditor', 'user'] as const) : (['admin', 'user'] as const))),
    SetMetadata(CLUSTER_SCOPE_KEY, { needs, reads, from } satisfies ClusterScope),
    UseGuards(ClusterRoleGuard),
  );
};
