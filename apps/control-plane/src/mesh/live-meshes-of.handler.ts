import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ReadModelStore } from '@fleet/readmodels/port';
import { LiveMeshesOf } from '../clusters';
import { READ_MODELS } from '../platform/runtime/tokens';
import { LIVE_MESH_STATUSES } from './mesh.events';
import { MESH_REQUESTS } from './mesh.projection';

@QueryHandler(LiveMeshesOf)
export class LiveMeshesOfHandler implements IQueryHandler<LiveMeshesOf> {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  execute({ clusterId }: LiveMeshesOf): Promise<number> {
    return this.readModels.count(MESH_REQUESTS, {
      clusterIds: clusterId,
      status: { $in: LIVE_MESH_STATUSES },
    });
  }
}
