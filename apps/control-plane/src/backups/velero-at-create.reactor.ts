import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DomainError, systemContext, uuidFrom } from '@fleet/kernel';
import { VELERO_AT_CREATE_REACTOR, clusterCodec } from '../clusters';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { backupPolicyStreamId } from './backup.events';
import { backupPolicyAggregate } from './backup-policy.decider';
import { BackupPoliciesService, DEFAULT_POLICY_TTL_HOURS } from './backup-policies.service';

/**
 * `velero` enabled at create becomes the cluster's backup policy, set by its creator. Only a
 * cluster with no policy yet adopts it: a policy set since (PUT …/backup-policy) is the
 * newer word, and a replay of the log must not undo it.
 */
@Injectable()
export class VeleroAtCreateReactor implements OnModuleInit {
  private readonly logger = new Logger('backups');
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(BackupPoliciesService) private readonly policies: BackupPoliciesService,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
  ) {}

  onModuleInit(): void {
    this.registry.addReactor({ name: VELERO_AT_CREATE_REACTOR, react: (e) => this.react(e) });
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('cluster-')) return;
    const event = clusterCodec.decode(stored.type, stored.data);
    if (event?.type !== 'ClusterRequested' || !event.data.velero?.enabled) return;
    const { clusterId, velero, at } = event.data;
    const policy = await this.pipeline.load(backupPolicyAggregate, backupPolicyStreamId(clusterId));
    if (policy.state.status !== 'none') return;
    const data = {
      clusterId,
      enabled: true,
      schedule: velero.schedule,
      ttlHours: velero.ttlHours ?? DEFAULT_POLICY_TTL_HOURS,
      includeNamespaces: null,
      by: stored.metadata.actor.sub,
      at,
    };
    const ctx = systemContext(uuidFrom(stored.eventId, 'velero-at-create'), {
      cause: stored,
      now: new Date(at),
    });
    try {
      await this.policies.execute(clusterId, { type: 'SetBackupPolicy', data }, ctx);
    } catch (error) {
      // A create recorded before its schedule was checked: nothing to adopt, said once.
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(`velero of cluster ${clusterId} at create not adopted: ${error.message}`);
    }
  }
}
