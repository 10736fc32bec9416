import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { WebhookDeliveryEvent, webhookDeliveryDecider } from './webhook-delivery';

const spec = deciderSpec(webhookDeliveryDecider);
const data = { notificationId: 'n1', at: 'T1' };
const requested: WebhookDeliveryEvent = { type: 'WebhookDeliveryRequested', data };
const delivered: WebhookDeliveryEvent = {
  type: 'WebhookDelivered',
  data: { notificationId: 'n1', at: 'T2' },
};

describe('a webhook delivery', () => {
  it('is asked for once, however often the reactor replays its event', () => {
    spec.given().when({ type: 'RequestWebhookDelivery', data }).then([requested]);
    spec.given([requested]).when({ type: 'RequestWebhookDelivery', data }).thenNothing();
    spec.given([requested, delivered]).when({ type: 'RequestWebhookDelivery', data }).thenNothing();
  });

  it('is recorded done once, though a job run twice posts twice', () => {
    spec
      .given([requested])
      .when({ type: 'RecordWebhookDelivered', data: delivered.data })
      .then([delivered]);
    spec
      .given([requested, delivered])
      .when({ type: 'RecordWebhookDelivered', data: { notificationId: 'n1', at: 'T3' } })
      .thenNothing();
  });
});
