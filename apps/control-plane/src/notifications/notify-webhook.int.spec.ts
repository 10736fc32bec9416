import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { Notification } from './notification';
import {
  NOTIFY_WEBHOOK_QUEUE,
  WebhookDeliveryError,
  deliverNotification,
  notifyWebhookReactor,
} from './notify-webhook';

const offline: StoredEvent = {
  eventId: 'evt-offline',
  type: 'NodeWentOffline.v1',
  data: {
    nodeId: 'n1',
    clusterId: 'c1',
    hostname: 'gpu-a-01',
    reason: 'kubelet_not_ready',
    from: 'ready',
    lastSeenAt: '2026-12-02T10:00:00.000Z',
    at: '2026-12-02T10:01:00.000Z',
  },
  streamId: 'node-n1',
  revision: 1,
  position: asLogPosition(2),
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: { sub: 'system', roles: ['system'] },
    occurredAt: '2026-12-02T10:01:00.000Z',
    schemaVersion: 1,
  },
};

const notification: Notification = {
  id: 'evt-offline',
  type: 'node_status_changed',
  clusterId: 'c1',
  nodeId: 'n1',
  hostname: 'gpu-a-01',
  from: 'ready',
  to: 'offline',
  reason: 'kubelet_not_ready',
  at: '2026-12-02T10:01:00.000Z',
};

const fakeJobs = () => {
  const scheduled: Array<{ queue: string; jobId: string; runAt: number; payload: unknown }> = [];
  const jobs = {
    schedule: async (queue: string, jobId: string, runAt: number, payload: unknown) => {
      scheduled.push({ queue, jobId, runAt, payload });
    },
  } as unknown as DelayedJobs;
  return { jobs, scheduled };
};

describe('the notify-webhook reactor', () => {
  it('schedules one job per notification, due now, its id the notification id', async () => {
    const { jobs, scheduled } = fakeJobs();
    const reactor = notifyWebhookReactor(jobs, 'http://hooks.example/x', () => 1234);
    await reactor.react(offline);
    await reactor.react(offline);
    expect(scheduled).toEqual([
      { queue: NOTIFY_WEBHOOK_QUEUE, jobId: 'evt-offline', runAt: 1234, payload: notification },
      { queue: NOTIFY_WEBHOOK_QUEUE, jobId: 'evt-offline', runAt: 1234, payload: notification },
    ]);
  });

  it('schedules nothing for an event that raises no notification', async () => {
    const { jobs, scheduled } = fakeJobs();
    await notifyWebhookReactor(jobs, 'http://hooks.example/x').react({
      ...offline,
      type: 'NodeCordoned.v1',
    });
    expect(scheduled).toEqual([]);
  });

  it('schedules nothing when no webhook is configured', async () => {
    const { jobs, scheduled } = fakeJobs();
    await notifyWebhookReactor(jobs, undefined).react(offline);
    expect(scheduled).toEqual([]);
  });
});

describe('delivering a notification', () => {
  let server: http.Server;
  let url: string;
  let answer: (res: http.ServerResponse) => void;
  const seen: Array<{ headers: http.IncomingHttpHeaders; body: string; method?: string }> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body, method: req.method });
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  beforeEach(() => (seen.length = 0));
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  const info = { queue: NOTIFY_WEBHOOK_QUEUE, jobId: notification.id, attempt: 1, runAt: 0 };

  it('POSTs the notification as JSON with its id as x-notification-id and idempotency-key', async () => {
    answer = (res) => res.writeHead(200).end('ok');
    await deliverNotification(url)(notification, info);
    expect(seen).toHaveLength(1);
    expect(seen[0].method).toBe('POST');
    expect(seen[0].headers).toMatchObject({
      'content-type': 'application/json',
      'x-notification-id': notification.id,
      'idempotency-key': notification.id,
    });
    expect(JSON.parse(seen[0].body)).toEqual(notification);
  });

  it('throws on a non-2xx answer, so the job is retried', async () => {
    answer = (res) => res.writeHead(503).end('busy');
    await expect(deliverNotification(url)(notification, info)).rejects.toThrow(
      new WebhookDeliveryError('webhook answered 503'),
    );
  });

  it('throws when the receiver does not answer in time', async () => {
    answer = () => undefined; // never answers
    await expect(deliverNotification(url, 200)(notification, info)).rejects.toBeInstanceOf(
      WebhookDeliveryError,
    );
  });

  it('throws when nothing listens', async () => {
    await expect(
      deliverNotification('http://127.0.0.1:1/hook')(notification, info),
    ).rejects.toBeInstanceOf(WebhookDeliveryError);
  });
});
