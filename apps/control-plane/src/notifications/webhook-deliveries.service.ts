import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { EventStore, StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs, JobHandler, scheduleUnlessBusy } from '@fleet/jobs/port';
import { systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { Notification, NOTIFICATION_FIELDS } from './notification';
import { NOTIFICATIONS, NotificationDoc } from './notifications.projection';
import { NOTIFY_WEBHOOK_QUEUE } from './notify-webhook';
import {
  WEBHOOK_DELIVERIES,
  WebhookDeliveryDoc,
  webhookDeliveryAggregate,
  webhookDeliveryStreamId,
} from './webhook-delivery';

/** Owed deliveries handed back at once, at most. */
const REPAIR_SLICE = 500;

/**
 * The webhook's deliveries as facts in the log (asked for, done), so none is lost with the
 * queue: Redis restarted empty takes the pending jobs (a receiver failing, a retry waiting)
 * with it, and `repair` hands every delivery asked for and not done back to the queue.
 */
@Injectable()
export class WebhookDeliveries {
  private readonly logger = new Logger('notify-webhook');

  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async requested(notification: Notification, event: StoredEvent): Promise<void> {
    const commandId = uuidFrom('webhook-requested', notification.id);
    await this.pipeline.handle(
      webhookDeliveryAggregate,
      webhookDeliveryStreamId(notification.id),
      {
        type: 'RequestWebhookDelivery',
        data: { notificationId: notification.id, at: event.metadata.occurredAt },
      },
      // Caused by the event that raised the notification, in its request's correlation.
      systemContext(commandId, { cause: event }),
    );
  }

  /** The delivery job: POST, then record it done (a failure to record means one more POST). */
  handler(post: JobHandler<Notification>): JobHandler<Notification> {
    return async (notification, info) => {
      await post(notification, info);
      const now = new Date();
      const commandId = uuidFrom('webhook-delivered', notification.id);
      await this.pipeline.handle(
        webhookDeliveryAggregate,
        webhookDeliveryStreamId(notification.id),
        {
          type: 'RecordWebhookDelivered',
          data: { notificationId: notification.id, at: now.toISOString() },
        },
        // Caused by the request to deliver (the stream's first event), in its correlation.
        systemContext(commandId, { now, cause: await this.requestOf(notification.id) }),
      );
    };
  }

  private async requestOf(notificationId: string): Promise<StoredEvent | undefined> {
    const [first] = await this.store.readStream(webhookDeliveryStreamId(notificationId), {
      limit: 1,
    });
    return first;
  }

  /** Every JOBS_REPAIR_SEC and at start: deliveries asked for, not done, with no job. */
  async repair(): Promise<number> {
    const owed = await findAll<WebhookDeliveryDoc & Doc>(this.readModels, WEBHOOK_DELIVERIES, {
      deliveredAt: null,
    });
    if (owed.length === 0) return 0;
    const live = await this.jobs.liveJobIds(NOTIFY_WEBHOOK_QUEUE);
    const lost = owed.filter((d) => !live.has(d.notificationId));
    let handedBack = 0;
    for (let i = 0; i < lost.length; i += REPAIR_SLICE) {
      await Promise.all(
        lost.slice(i, i + REPAIR_SLICE).map(async ({ notificationId }) => {
          const doc = await this.readModels.get<NotificationDoc>(NOTIFICATIONS, notificationId);
          if (!doc) return; // the notifications projection has not shown it yet
          const notification = Object.fromEntries(
            NOTIFICATION_FIELDS.map((f) => [f, doc[f]]),
          ) as unknown as Notification;
          if (
            await scheduleUnlessBusy(
              this.jobs,
              NOTIFY_WEBHOOK_QUEUE,
              notificationId,
              Date.now(),
              notification,
            )
          )
            handedBack++;
        }),
      );
    }
    if (handedBack > 0)
      this.logger.log(`handed ${handedBack} lost webhook delivery(ies) back to the queue`);
    return handedBack;
  }
}
