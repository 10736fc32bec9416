import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { DelayedJobs } from '@fleet/jobs/port';
import { clusterLivenessCodec } from '../clusters';
import { Config } from '../config/config';
import { nodeCodec } from '../nodes';
import { EventTypes } from '../platform/runtime/event-types';
import { Runtime } from '../platform/runtime/runtime.service';
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
import { webhookDeliveriesProjection, webhookDeliveryCodec } from './webhook-delivery';
import { WebhookDeliveries } from './webhook-deliveries.service';

/**
 * Admin notifications: a projection into the `notifications` read model, the list endpoint,
 * and, with NOTIFY_WEBHOOK_URL set, at-least-once webhook delivery through delayed jobs.
 */
@Module({ controllers: [NotificationsController], providers: [WebhookDeliveries] })
export class NotificationsModule implements OnModuleInit {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly eventTypes: EventTypes,
    @Inject(WebhookDeliveries) private readonly deliveries: WebhookDeliveries,
    @Inject(Runtime) private readonly runtime: Runtime,
  ) {}

  onModuleInit(): void {
    // Idempotent: the node and cluster features may register the same codecs.
    this.eventTypes.register(nodeCodec);
    this.eventTypes.register(clusterLivenessCodec);
    this.eventTypes.register(webhookDeliveryCodec);
    this.registry.addProjection(notificationsProjection);
    this.registry.addProjection(webhookDeliveriesProjection);
    this.registry.addReactor(
      notifyWebhookReactor(this.jobs, this.config.notifyWebhookUrl, Date.now, (n, e) =>
        this.deliveries.requested(n, e),
      ),
    );
    const url = this.config.notifyWebhookUrl;
    if (url) {
      this.jobs.register<Notification>(
        NOTIFY_WEBHOOK_QUEUE,
        this.deliveries.handler(deliverNotification(url)),
        NOTIFY_WEBHOOK_QUEUE_OPTIONS,
      );
      // Redis may lose pending deliveries (restarted empty): hand back what is owed.
      this.runtime.afterStart(async () => void (await this.deliveries.repair()));
      this.runtime.every(
        'webhook-deliveries-repair',
        this.config.jobsRepairSec * 1000,
        async () => void (await this.deliveries.repair()),
      );
    }
  }
}
