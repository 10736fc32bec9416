import { Aggregate, Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Decider, EventCodec, assertNever } from '@fleet/kernel';

/**
 * A notification's trip to the webhook, on a stream of its own: asked for when the webhook
 * reactor hands it to the delivery queue, done when the receiver answered 2xx. The queue's
 * jobs live in Redis and may be lost with it; these two facts in the log let a reconciler
 * hand back every delivery that was asked for and never done.
 */
export type WebhookDeliveryEvent =
  | { type: 'WebhookDeliveryRequested'; data: { notificationId: string; at: string } }
  | { type: 'WebhookDelivered'; data: { notificationId: string; at: string } };

export type WebhookDeliveryCommand =
  | { type: 'RequestWebhookDelivery'; data: { notificationId: string; at: string } }
  | { type: 'RecordWebhookDelivered'; data: { notificationId: string; at: string } };

export type WebhookDeliveryState =
  | { status: 'none' }
  | { status: 'requested'; requestedAt: string }
  | { status: 'delivered'; deliveredAt: string };

export const webhookDeliveryCodec = new EventCodec<WebhookDeliveryEvent>({
  WebhookDeliveryRequested: 1,
  WebhookDelivered: 1,
});

export const webhookDeliveryStreamId = (notificationId: string): string =>
  `webhook-${notificationId}`;

export const webhookDeliveryDecider: Decider<
  WebhookDeliveryCommand,
  WebhookDeliveryEvent,
  WebhookDeliveryState
> = {
  initialState: () => ({ status: 'none' }),
  evolve: (_state, event) => {
    switch (event.type) {
      case 'WebhookDeliveryRequested':
        return { status: 'requested', requestedAt: event.data.at };
      case 'WebhookDelivered':
        return { status: 'delivered', deliveredAt: event.data.at };
      default:
        return assertNever(event, 'webhook delivery event');
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      // Asked once: a replayed reactor page asks again and changes nothing.
      case 'RequestWebhookDelivery':
        return state.status === 'none'
          ? [{ type: 'WebhookDeliveryRequested', data: command.data }]
          : [];
      // Delivery is at least once: a second 2xx (a job run twice) records nothing more.
      case 'RecordWebhookDelivered':
        return state.status === 'delivered'
          ? []
          : [{ type: 'WebhookDelivered', data: command.data }];
      default:
        return assertNever(command, 'webhook delivery command');
    }
  },
};

export const webhookDeliveryAggregate: Aggregate<
  WebhookDeliveryCommand,
  WebhookDeliveryEvent,
  WebhookDeliveryState
> = { name: 'webhook-delivery', decider: webhookDeliveryDecider, codec: webhookDeliveryCodec };

export const WEBHOOK_DELIVERIES = 'webhook_deliveries';

export type WebhookDeliveryDoc = {
  _id: string;
  _rev: number;
  notificationId: string;
  requestedAt: string;
  deliveredAt: string | null;
};

/** Which deliveries are still owed (`deliveredAt` null), for the reconciler. */
export const webhookDeliveriesProjection: Projection = {
  name: 'webhook-deliveries',
  collections: [{ name: WEBHOOK_DELIVERIES, indexes: ['deliveredAt'] }],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('webhook-')) return;
    const event = webhookDeliveryCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = event.data.notificationId;
    const doc = await writer.get<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES, id);
    if (doc && stored.revision <= doc._rev) return;
    writer.upsert(WEBHOOK_DELIVERIES, {
      _id: id,
      _rev: stored.revision,
      notificationId: id,
      requestedAt: doc?.requestedAt ?? event.data.at,
      deliveredAt: event.type === 'WebhookDelivered' ? event.data.at : null,
    });
  },
};
