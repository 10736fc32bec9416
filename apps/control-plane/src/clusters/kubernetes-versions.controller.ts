import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ROLES } from '../platform/auth/caller';
import { Roles } from '../platform/auth/decorators';
import { KubernetesVersionsView } from './clusters.dto';
import { ClustersService } from './clusters.service';

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/kubernetes-versions')
export class KubernetesVersionsController {
  constructor(@Inject(ClustersService) private readonly clusters: ClustersService) {}

  /** The versions a cluster may be created at (K8S_VERSIONS); any authenticated caller reads them. */
  @Get()
  @Roles(...ROLES)
  @ApiOkResponse({ type: KubernetesVersionsView })
  list(): KubernetesVersionsView {
    return this.clusters.versions();
  }
}
