import { Reactor } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs, JobHandler, QueueOptions } from '@fleet/jobs/port';
import { Notification, toNotification } from './notification';

export const NOTIFY_WEBHOOK_QUEUE = 'notify-webhook';

/**
 * Exponential backoff from 500 ms: the first retries come fast (a receiver restarting is
 * reached within seconds), and 18 tries span 500 ms × (2^17 − 1) ≈ 18 h, so a receiver down
 * overnight still gets everything. A job that exhausts them stays in the queue's failed set
 * (`fleet_delayed_jobs` metrics), and the notification stays readable at GET /v1/notifications.
 */
export const NOTIFY_WEBHOOK_QUEUE_OPTIONS: QueueOptions = {
  attempts: 18,
  backoffMs: 500,
  concurrency: 10,
};

export const NOTIFY_WEBHOOK_TIMEOUT_MS = 5000;

/**
 * Schedules one delivery job per notification, its id the notification's id: a reactor replay
 * of a page (a crash before its checkpoint was stored) replaces a pending job, never doubles it.
 * Once a job has completed, though, a replay would deliver again: delivery is at-least-once,
 * and receivers dedupe by `x-notification-id` (also sent as `idempotency-key`).
 *
 * Registered even with no webhook configured, doing nothing: its checkpoint then keeps up
 * with the log, so configuring a URL later sends what happens from then on, not the history.
 */
export const notifyWebhookReactor = (
  jobs: DelayedJobs,
  webhookUrl: string | undefined,
  now: () => number = Date.now,
  /** Records in the log that the delivery was asked for (before its job exists). */
  requested: (notification: Notification, event: StoredEvent) => Promise<void> = async () =>
    undefined,
): Reactor => ({
  name: 'notify-webhook',
  async react(event) {
    if (!webhookUrl) return;
    const notification = toNotification(event);
    if (notification) {
      await requested(notification, event);
      await jobs.schedule(NOTIFY_WEBHOOK_QUEUE, notification.id, now(), notification);
    }
  },
});

export class WebhookDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookDeliveryError';
  }
}

/**
 * POSTs one notification. Anything but a 2xx (or no answer within the timeout) throws, so the
 * jobs adapter retries it with backoff.
 */
export const deliverNotification =
  (webhookUrl: string, timeoutMs = NOTIFY_WEBHOOK_TIMEOUT_MS): JobHandler<Notification> =>
  async (notification) => {
    let response: Response;
    try {
      response = await fetch(webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-notification-id': notification.id,
          'idempotency-key': notification.id,
        },
        body: JSON.stringify(notification),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new WebhookDeliveryError(
        `webhook unreachable: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    // Read the body to the end so the connection goes back to the pool.
    await response.arrayBuffer().catch(() => undefined);
    if (!response.ok) throw new WebhookDeliveryError(`webhook answered ${response.status}`);
  };
