import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { EventMetadata } from '@fleet/kernel';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { startApp, TestApp } from '../support/app';
import { recordMade } from '../support/test-run';

/** A webhook receiver that refuses the first `failFirst` tries of each notification with 500. */
type Receiver = {
  readonly url: string;
  /** Every try, in arrival order. */
  readonly tries: Array<{
    id: string;
    status: number;
    headers: http.IncomingHttpHeaders;
    body: unknown;
  }>;
  delivered(id: string): number;
  close(): Promise<void>;
};

const startReceiver = async (failFirst: number): Promise<Receiver> => {
  const tries: Receiver['tries'] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const id = String(req.headers['x-notification-id'] ?? '');
      const earlier = tries.filter((t) => t.id === id).length;
      const status = earlier < failFirst ? 500 : 204;
      tries.push({ id, status, headers: req.headers, body: JSON.parse(text || 'null') });
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/fleet`,
    tries,
    delivered: (id) => tries.filter((t) => t.id === id && t.status < 300).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** Bounded poll: the webhook is asynchronous by design. */
const eventually = async (check: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const metadata = (at: string): EventMetadata => ({
  correlationId: `corr-${randomUUID()}`,
  causationId: `cause-${randomUUID()}`,
  actor: { sub: 'system', roles: ['system'] },
  occurredAt: at,
  schemaVersion: 1,
});

const NODE = 'n-e2e-1';
const CLUSTER = 'c1';
const HOST = 'gpu-a-01';
// Recent times: the node feature's offline timer (lastSeenAt + NODE_STALE_SEC) must not fire.
const BASE = Date.now() - 60_000;
const iso = (offsetMs: number) => new Date(BASE + offsetMs).toISOString();
const REGISTERED_AT = iso(0);
const OFFLINE_AT = iso(5_000);
const ONLINE_AT = iso(20_000);
const STALLED_AT = iso(40_000);
/** Between ONLINE_AT and STALLED_AT, written with a +01:00 offset. */
const MIDWAY_PLUS_0100 = new Date(BASE + 30_000 + 3_600_000).toISOString().replace('Z', '+01:00');
/** Knobs that keep other features from adding events of their own during the test. */
const ENV = { NODE_STALE_SEC: '86400' };

/** Node transitions appended straight to the log, as the inventory feature would decide them. */
const appendTransitions = async (store: EventStore) => {
  const ids = { offline: randomUUID(), online: randomUUID(), stalled: randomUUID() };
  await store.append(
    `node-${NODE}`,
    [
      {
        eventId: randomUUID(),
        type: 'NodeRegistered.v1',
        data: {
          nodeId: NODE,
          clusterId: CLUSTER,
          hostname: HOST,
          role: 'gpu',
          labels: {},
          mode: 'shared',
          capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
          gpus: [],
          kubeletReady: true,
          unschedulable: false,
          observedAt: null,
          registeredAt: REGISTERED_AT,
        },
        metadata: metadata(REGISTERED_AT),
      },
    ],
    'no_stream',
  );
  await store.append(
    `node-${NODE}`,
    [
      {
        eventId: ids.offline,
        type: 'NodeWentOffline.v1',
        data: {
          nodeId: NODE,
          clusterId: CLUSTER,
          hostname: HOST,
          reason: 'heartbeat_timeout',
          from: 'ready',
          lastSeenAt: REGISTERED_AT,
          at: OFFLINE_AT,
        },
        metadata: metadata(OFFLINE_AT),
      },
    ],
    'any',
  );
  await store.append(
    `node-${NODE}`,
    [
      {
        eventId: ids.online,
        type: 'NodeCameOnline.v1',
        data: {
          nodeId: NODE,
          clusterId: CLUSTER,
          hostname: HOST,
          offlineSince: OFFLINE_AT,
          to: 'ready',
          at: ONLINE_AT,
        },
        metadata: metadata(ONLINE_AT),
      },
    ],
    'any',
  );
  await store.append(
    `cluster-${CLUSTER}`,
    [
      {
        eventId: ids.stalled,
        type: 'ClusterReportsStalled.v1',
        data: {
          clusterId: CLUSTER,
          staleNodes: [
            { nodeId: 'n-a', hostname: 'a' },
            { nodeId: 'n-b', hostname: 'b' },
          ],
          onlineNodes: 3,
          lastSeenAt: ONLINE_AT,
          at: STALLED_AT,
        },
        metadata: metadata(STALLED_AT),
      },
    ],
    'any',
  );
  return ids;
};

describe('admin notifications', () => {
  let receiver: Receiver;
  let t: TestApp;
  let ids: { offline: string; online: string; stalled: string };
  const redisPrefix = `fleet-e2e-${randomUUID().slice(0, 8)}`;
  recordMade('redis', redisPrefix); // its own, across the restart: removed when the run ends

  const list = async (app: TestApp, query = '', who?: Record<string, string>) => {
    const res = await request(app.url)
      .get(`/v1/notifications${query}`)
      .set(who ?? (await app.auth('root', ['admin'])));
    expect(res.status).toBe(200);
    return res.body as { items: Array<Record<string, unknown>>; nextCursor: string | null };
  };

  beforeAll(async () => {
    receiver = await startReceiver(2);
    t = await startApp({ ...ENV, NOTIFY_WEBHOOK_URL: receiver.url, REDIS_PREFIX: redisPrefix });
    ids = await appendTransitions(t.app.get<EventStore>(EVENT_STORE));
    await t.app.get(SubscriptionRunner).caughtUp();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('shows an admin one notification per transition, oldest first, with exactly the API fields', async () => {
    const body = await list(t);
    expect(body).toEqual({
      items: [
        {
          id: ids.offline,
          type: 'node_status_changed',
          clusterId: CLUSTER,
          nodeId: NODE,
          hostname: HOST,
          from: 'ready',
          to: 'offline',
          reason: 'heartbeat_timeout',
          at: OFFLINE_AT,
        },
        {
          id: ids.online,
          type: 'node_status_changed',
          clusterId: CLUSTER,
          nodeId: NODE,
          hostname: HOST,
          from: 'offline',
          to: 'ready',
          reason: null,
          at: ONLINE_AT,
        },
        {
          id: ids.stalled,
          type: 'cluster_reports_stalled',
          clusterId: CLUSTER,
          nodeId: null,
          hostname: null,
          from: null,
          to: null,
          reason: '2 of 3 online nodes stopped reporting',
          at: STALLED_AT,
        },
      ],
      nextCursor: null,
    });
  });

  it('refuses a user and an operator with 403 forbidden', async () => {
    for (const role of ['user', 'operator'] as const) {
      const res = await request(t.url)
        .get('/v1/notifications')
        .set(await t.auth('someone', [role]));
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
  });

  it("lets an auditor read them all, as an admin does (API.md's role table)", async () => {
    const auditor = await list(t, '', await t.auth('someone', ['auditor']));
    expect(auditor.items.length).toBeGreaterThan(0);
    expect(auditor).toEqual(await list(t, ''));
  });

  it('returns only notifications after `since`, in any UTC offset', async () => {
    expect((await list(t, `?since=${OFFLINE_AT}`)).items.map((i) => i.id)).toEqual([
      ids.online,
      ids.stalled,
    ]);
    const sameInstant = encodeURIComponent(MIDWAY_PLUS_0100);
    expect((await list(t, `?since=${sameInstant}`)).items.map((i) => i.id)).toEqual([ids.stalled]);
    expect((await list(t, `?since=${iso(3_600_000)}`)).items).toEqual([]);
  });

  it('pages with limit and cursor', async () => {
    const first = await list(t, '?limit=2');
    expect(first.items.map((i) => i.id)).toEqual([ids.offline, ids.online]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await list(t, `?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`);
    expect(second).toEqual({
      items: [expect.objectContaining({ id: ids.stalled })],
      nextCursor: null,
    });
  });

  it.each([
    ['since=yesterday'],
    ['since=2026-12-02T10:00:00'], // no UTC offset
    ['since=2026-12-02T10:00:00,5Z'], // ISO-8601, but a form Date cannot read
    ['since=2026-12-02T1000Z'],
    ['limit=0'],
    ['limit=1001'],
    ['cursor=not-a-cursor'],
    ['bogus=1'],
  ])('refuses ?%s with 400 validation_failed', async (query) => {
    const res = await request(t.url)
      .get(`/v1/notifications?${query}`)
      .set(await t.auth('root', ['admin']));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });

  it('delivers each notification to the webhook exactly once, retrying through two 500s', async () => {
    const all = [ids.offline, ids.online, ids.stalled];
    await eventually(() => all.every((id) => receiver.delivered(id) === 1));
    // Nothing more arrives once each was answered 2xx.
    await sleep(1500);
    for (const id of all) {
      const tries = receiver.tries.filter((x) => x.id === id);
      expect(tries.map((x) => x.status)).toEqual([500, 500, 204]);
      for (const x of tries) {
        expect(x.headers['content-type']).toBe('application/json');
        expect(x.headers['idempotency-key']).toBe(id);
      }
    }
    const listed = (await list(t)).items;
    for (const item of listed) {
      expect(receiver.tries.find((x) => x.id === item.id)?.body).toEqual(item);
    }
    // In the log, each delivery joins the chain of the event that raised it.
    const admin = await t.auth('root', ['admin']);
    const streamOf = async (id: string) =>
      (await request(t.url).get(`/v1/streams/${id}`).set(admin)).body.events as Array<{
        eventId: string;
        type: string;
        metadata: { correlationId: string; causationId: string };
      }>;
    const raised = (await streamOf(`node-${NODE}`)).find((e) => e.eventId === ids.offline)!;
    let events = await streamOf(`webhook-${ids.offline}`);
    for (let i = 0; i < 100 && events.length < 2; i++) {
      await sleep(50);
      events = await streamOf(`webhook-${ids.offline}`);
    }
    const [requested, delivered] = events;
    expect(requested.type).toBe('WebhookDeliveryRequested.v1');
    expect(requested.metadata).toMatchObject({
      correlationId: raised.metadata.correlationId,
      causationId: raised.eventId,
    });
    expect(delivered.type).toBe('WebhookDelivered.v1');
    expect(delivered.metadata).toMatchObject({
      correlationId: raised.metadata.correlationId,
      causationId: requested.eventId,
    });
  });

  it('after a restart on the same data, rebuilds the same list and delivers nothing again', async () => {
    const before = await list(t);
    const triesBefore = receiver.tries.length;
    const dataDir = t.config.dataDir;
    await t.close();
    t = await startApp(
      { NOTIFY_WEBHOOK_URL: receiver.url, REDIS_PREFIX: redisPrefix },
      { dataDir },
    );
    await t.app.get(SubscriptionRunner).caughtUp();
    expect(await list(t)).toEqual(before);
    await sleep(1500);
    expect(receiver.tries.length).toBe(triesBefore);
  });
});

describe('admin notifications, listed as recorded', () => {
  let t: TestApp;
  let store: EventStore;
  let seq = 0;
  const get = async (query = '') => {
    const res = await request(t.url)
      .get(`/v1/notifications${query}`)
      .set(await t.auth('root', ['admin']));
    expect(res.status).toBe(200);
    return res.body as { items: Array<{ id: string; at: string }>; nextCursor: string | null };
  };
  /** One stalled-cluster notification recorded now, whatever its `at` says. */
  const record = async (at: string): Promise<string> => {
    const eventId = randomUUID();
    seq += 1;
    await store.append(
      `cluster-c-order-${seq}`,
      [
        {
          eventId,
          type: 'ClusterReportsStalled.v1',
          data: {
            clusterId: `c-order-${seq}`,
            staleNodes: [
              { nodeId: 'n-a', hostname: 'a' },
              { nodeId: 'n-b', hostname: 'b' },
              { nodeId: 'n-c', hostname: 'c' },
            ],
            onlineNodes: 3,
            lastSeenAt: at,
            at,
          },
          metadata: metadata(at),
        },
      ],
      'any',
    );
    return eventId;
  };

  beforeAll(async () => {
    t = await startApp({ ...ENV });
    store = t.app.get<EventStore>(EVENT_STORE);
  });
  afterAll(async () => t?.close());

  it('lists every notification without a limit, past any default page, oldest recorded first', async () => {
    const recorded: string[] = [];
    // Recorded in this order with ever earlier times: the order shown is the order recorded.
    for (let i = 0; i < 130; i++) recorded.push(await record(iso(-i * 1000)));
    await t.app.get(SubscriptionRunner).caughtUp();
    const all = await get();
    expect(all.items.map((i) => i.id)).toEqual(recorded);
    expect(all.nextCursor).toBeNull();
  });

  it('pages without a gap when a notification recorded later carries an earlier time', async () => {
    const before = (await get()).items.map((i) => i.id);
    const first = await get('?limit=50');
    expect(first.nextCursor).toEqual(expect.any(String));
    // Recorded after the first page was read, dated before everything listed.
    const late = await record(iso(-3_600_000));
    await t.app.get(SubscriptionRunner).caughtUp();
    const seen = first.items.map((i) => i.id);
    let cursor = first.nextCursor;
    while (cursor) {
      const page = await get(`?limit=50&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...before, late]);
  });
});
