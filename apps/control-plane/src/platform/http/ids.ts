import { Injectable, PipeTransform } from '@nestjs/common';
import { validationFailed } from '../errors/error-envelope';

/**
 * The ids the API hands out, and the one rule each follows wherever it is given: in a path
 * (`/v1/nodes/{nodeId}`) or as a filter (`?nodeId=`). Nodes, pools, sessions, operations and
 * drains have lower-case UUIDs; a cluster id is a DNS label (operators name the clusters they
 * report for, and such a cluster is adopted under that name), so any such label may exist.
 */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const CLUSTER_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const ID_KINDS = {
  nodeId: 'a node id',
  poolId: 'a pool id',
  sessionId: 'a session id',
  operationId: 'an operation id',
  drainId: 'a drain id',
  meshRequestId: 'a mesh request id',
  backupId: 'a backup id',
} as const;
export type IdField = keyof typeof ID_KINDS;

export const CLUSTER_ID_RULE =
  'must be a cluster id (1-63 characters of [a-z0-9-], starting and ending with a letter or digit)';

/** `id` when it is one of `field`'s kind, else 400 naming the field. */
export const checkId = (field: IdField, id: string): string => {
  if (!UUID.test(id)) throw validationFailed([{ field, problems: [`must be ${ID_KINDS[field]}`] }]);
  return id;
};

export const checkClusterId = (id: string): string => {
  if (!CLUSTER_ID.test(id)) {
    throw validationFailed([{ field: 'clusterId', problems: [CLUSTER_ID_RULE] }]);
  }
  return id;
};

/** `@Param('clusterId', ClusterIdPipe)`: a malformed cluster id in a path is 400, as in a filter. */
@Injectable()
export class ClusterIdPipe implements PipeTransform<string, string> {
  transform(id: string): string {
    return checkClusterId(id);
  }
}
