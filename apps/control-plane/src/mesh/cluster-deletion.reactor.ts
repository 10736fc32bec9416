import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { StoredEvent } from '@fleet/eventstore/port';
import { systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { clusterCodec } from '../clusters';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { READ_MODELS } from '../platform/runtime/tokens';
import { MeshCommand } from './mesh.decider';
import { LIVE_MESH_STATUSES } from './mesh.events';
import { MESH_REQUESTS, MeshRequestDoc } from './mesh.projection';
import { MeshService } from './mesh.service';

/**
 * A cluster going `deleting` takes its meshes down first: a live request not yet connected is
 * cancelled, a connected one disconnected (the link process carries both through the
 * provisioner); the delete operation waits until none is live (LiveMeshesOf).
 */
@Injectable()
export class ClusterDeletionReactor implements OnModuleInit {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(MeshService) private readonly mesh: MeshService,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
  ) {}

  onModuleInit(): void {
    this.registry.addReactor({ name: 'mesh-cluster-deletion', react: (e) => this.react(e) });
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('cluster-')) return;
    const event = clusterCodec.decode(stored.type, stored.data);
    if (event?.type !== 'ClusterTransitioned' || event.data.to !== 'deleting') return;
    const { clusterId, at } = event.data;
    const live = await findAll<MeshRequestDoc & Doc>(this.readModels, MESH_REQUESTS, {
      clusterIds: clusterId,
      status: { $in: LIVE_MESH_STATUSES },
    });
    for (const { meshRequestId, status } of live) {
      const type: MeshCommand['type'] | null =
        status === 'connected'
          ? 'DisconnectMesh'
          : ['pending', 'approved', 'connecting'].includes(status)
            ? 'CancelMeshRequest'
            : null; // cancelling or disconnecting: on its way already
      if (type === null) continue;
      const data = {
        meshRequestId,
        by: 'system',
        reason: `cluster ${clusterId} is being deleted`,
        at,
      };
      await this.mesh.execute(
        meshRequestId,
        { type, data } as MeshCommand,
        systemContext(uuidFrom(stored.eventId, meshRequestId), {
          cause: stored,
          now: new Date(at),
        }),
      );
    }
  }
}
