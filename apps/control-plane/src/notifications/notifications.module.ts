import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { DelayedJobs } from '../../../../libs/jobs/src/port';
import { clusterLivenessCodec } from '../clusters/cluster-liveness.events';
import { Config } from '../config/config';
import { nodeCodec } from '../nodes/node.events';
import { JobQueues } from '../platform/observability/job-queues';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CONFIG, DELAYED_JOBS } from '../platform/runtime/tokens';
import { Notification } from './notification';
import { NotificationsController } from './notifications.controller';
import { notificationsProjection } from './notifications.projection';
import {
  NOTIFY_WEBHOOK_QUEUE,
  NOTIFY_WEBHOOK_QUEUE_OPTIONS,
  deliverNotification,
  notifyWebhookReactor,
} from './notify-webhook';

/**
 * Admin notifications: a projection into the `notifications` read model, the list endpoint,
 * and, with NOTIFY_WEBHOOK_URL set, at-least-once webhook delivery through delayed jobs.
 */
@Module({ controllers: [NotificationsController] })
export class NotificationsModule implements OnModuleInit {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly eventTypes: EventTypes,
    @Inject(JobQueues) private readonly queues: JobQueues,
  ) {}

  onModuleInit(): void {
    // Idempotent: the node and cluster features may register the same codecs.
    this.eventTypes.register(nodeCodec);
    this.eventTypes.register(clusterLivenessCodec);
    this.registry.addProjection(notificationsProjection);
    this.registry.addReactor(notifyWebhookReactor(this.jobs, this.config.notifyWebhookUrl));
    const url = this.config.notifyWebhookUrl;
    if (url) {
      this.jobs.register<Notification>(
        NOTIFY_WEBHOOK_QUEUE,
        deliverNotification(url),
        NOTIFY_WEBHOOK_QUEUE_OPTIONS,
      );
      this.queues.declare(NOTIFY_WEBHOOK_QUEUE);
    }
  }
}
