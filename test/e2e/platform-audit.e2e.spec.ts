import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import request from 'supertest';
import { EventStore, NewEvent } from '@fleet/eventstore/port';
import { Role } from '../../apps/control-plane/src/platform/auth/caller';
import { TokenService } from '../../apps/control-plane/src/platform/auth/token-service';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { startApp, TEST_SECRET, TestApp } from '../support/app';

const TOTAL = 10_000;
const STREAMS = 8;
const BATCH = 250;

type EventView = {
  eventId: string;
  streamId: string;
  revision: number;
  position: number;
  type: string;
  data: { n: number };
  metadata: { correlationId: string; causationId: string; actor: unknown; occurredAt: string };
};

/** Event n goes to stream n % STREAMS; every third one is a B, the rest A. */
const eventFor = (n: number): NewEvent => ({
  eventId: randomUUID(),
  type: n % 3 === 0 ? 'AuditProbeB.v1' : 'AuditProbeA.v1',
  data: { n },
  metadata: {
    correlationId: `corr-${Math.floor(n / BATCH)}`,
    causationId: `cmd-${n}`,
    actor: { sub: 'seeder', roles: ['admin'] },
    occurredAt: new Date(Date.UTC(2026, 11, 2, 10, 0, 0, n)).toISOString(),
    schemaVersion: 1,
  },
});

describe('the audit API over a log of 10,000 events', () => {
  let t: TestApp;
  let auditor: Record<string, string>;
  const appended = new Set<string>();

  beforeAll(async () => {
    t = await startApp();
    auditor = await t.auth('ann', ['auditor']);
    const store = t.app.get<EventStore>(EVENT_STORE);
    const byStream = new Map<string, NewEvent[]>();
    for (let n = 0; n < TOTAL; n++) {
      const streamId = `probe-${n % STREAMS}`;
      const event = eventFor(n);
      appended.add(event.eventId);
      byStream.set(streamId, [...(byStream.get(streamId) ?? []), event]);
    }
    // Batches of each stream in turn, so the global log interleaves the streams.
    const perStream = TOTAL / STREAMS;
    for (let offset = 0; offset < perStream; offset += BATCH) {
      for (const [streamId, events] of byStream) {
        const batch = events.slice(offset, offset + BATCH);
        await store.append(streamId, batch, offset === 0 ? 'no_stream' : offset - 1);
      }
    }
  });
  afterAll(async () => t.close());

  const page = async (query: string): Promise<{ events: EventView[]; nextPosition: number }> => {
    const res = await request(t.url).get(`/v1/events?${query}`).set(auditor);
    expect(res.status).toBe(200);
    return res.body;
  };

  const readAllPages = async (extra = ''): Promise<{ events: EventView[]; pages: number }> => {
    const events: EventView[] = [];
    let from = 0;
    let pages = 0;
    for (;;) {
      const body = await page(`fromPosition=${from}&limit=1000${extra}`);
      pages += 1;
      if (body.events.length === 0) {
        expect(body.nextPosition).toBe(from); // polling at the head stays put
        return { events, pages };
      }
      expect(body.events.length).toBeLessThanOrEqual(1000);
      events.push(...body.events);
      expect(body.nextPosition).toBe(body.events[body.events.length - 1].position);
      from = body.nextPosition;
    }
  };

  it('pages through the global log with limit 1000 without gaps or repeats', async () => {
    const { events, pages } = await readAllPages();
    expect(pages).toBe(TOTAL / 1000 + 1);
    expect(events).toHaveLength(TOTAL);
    expect(new Set(events.map((e) => e.eventId))).toEqual(appended);
    for (let i = 1; i < events.length; i++) {
      expect(events[i].position).toBeGreaterThan(events[i - 1].position);
    }
    // Each stream's events come in revision order with no hole.
    const next = new Map<string, number>();
    for (const e of events) {
      expect(e.revision).toBe(next.get(e.streamId) ?? 0);
      next.set(e.streamId, e.revision + 1);
    }
    expect([...next.values()]).toEqual(Array(STREAMS).fill(TOTAL / STREAMS));
  });

  it('carries each event with its metadata: correlation, causation, actor and time', async () => {
    const { events } = await page('fromPosition=0&limit=5');
    for (const e of events) {
      expect(e).toEqual({
        eventId: expect.any(String),
        streamId: `probe-${e.data.n % STREAMS}`,
        revision: expect.any(Number),
        position: expect.any(Number),
        type: e.data.n % 3 === 0 ? 'AuditProbeB.v1' : 'AuditProbeA.v1',
        data: { n: e.data.n },
        metadata: expect.objectContaining({
          correlationId: `corr-${Math.floor(e.data.n / BATCH)}`,
          causationId: `cmd-${e.data.n}`,
          actor: { sub: 'seeder', roles: ['admin'] },
          occurredAt: eventFor(e.data.n).metadata.occurredAt,
        }),
      });
    }
  });

  it('filters by type, bare or versioned, and still pages without gaps', async () => {
    const expected = Array.from({ length: TOTAL }, (_, n) => n).filter((n) => n % 3 === 0).length;
    for (const type of ['AuditProbeB', 'AuditProbeB.v1']) {
      const { events } = await readAllPages(`&type=${type}`);
      expect(events).toHaveLength(expected);
      expect(new Set(events.map((e) => e.type))).toEqual(new Set(['AuditProbeB.v1']));
      expect(new Set(events.map((e) => e.eventId)).size).toBe(expected);
    }
    const both = await readAllPages('&type=AuditProbeA,AuditProbeB');
    expect(both.events).toHaveLength(TOTAL);
    const none = await page('type=NoSuchEvent');
    expect(none.events).toEqual([]);
  });

  it('refuses a limit over 1000 and a malformed type filter', async () => {
    for (const query of [
      'limit=1001',
      'limit=0',
      'fromPosition=-1',
      'type=a;drop',
      'limit=x',
      // Past 2^53 a position loses digits: it would be echoed back as another one.
      'fromPosition=1e20',
      'fromPosition=9007199254740993',
    ]) {
      const res = await request(t.url).get(`/v1/events?${query}`).set(auditor);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
        query,
        status: 400,
        code: 'validation_failed',
      });
    }
  });

  it('pages one stream by revision', async () => {
    const revisions: number[] = [];
    for (let from = 0; ;) {
      const res = await request(t.url)
        .get(`/v1/streams/probe-3?fromRevision=${from}&limit=300`)
        .set(auditor);
      expect(res.status).toBe(200);
      const events = res.body.events as EventView[];
      if (events.length === 0) break;
      expect(events.every((e) => e.streamId === 'probe-3')).toBe(true);
      revisions.push(...events.map((e) => e.revision));
      from = events[events.length - 1].revision + 1;
    }
    expect(revisions).toEqual(Array.from({ length: TOTAL / STREAMS }, (_, i) => i));
    const last = TOTAL / STREAMS - 1;
    const tail = await request(t.url)
      .get(`/v1/streams/probe-3?fromRevision=${last - 2}`)
      .set(auditor);
    expect(tail.body.events.map((e: EventView) => e.revision)).toEqual([last - 2, last - 1, last]);
  });

  it('answers 404 not_found for a stream that does not exist', async () => {
    const res = await request(t.url).get('/v1/streams/probe-999').set(auditor);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  describe('who may read it', () => {
    const paths = ['/v1/events?limit=1', '/v1/streams/probe-0?limit=1'];

    it.each<[Role, number]>([
      ['auditor', 200],
      ['admin', 200],
      ['user', 403],
      ['operator', 403],
    ])('a %s gets %d', async (role, status) => {
      const headers = await t.auth(`someone-${role}`, [role], role === 'operator' ? ['c1'] : []);
      for (const path of paths) {
        const res = await request(t.url).get(path).set(headers);
        expect({ path, status: res.status }).toEqual({ path, status });
        if (status === 403) expect(res.body.error.code).toBe('forbidden');
      }
    });

    const refusedTokens: Array<[string, () => Promise<Record<string, string>>]> = [
      ['no token', async () => ({})],
      [
        'a token signed with another secret',
        async () => ({
          authorization: `Bearer ${await new TokenService('another-secret-that-is-long-enough-42').sign({ sub: 'mallory', roles: ['admin'] })}`,
        }),
      ],
      [
        'an expired token',
        async () => ({
          authorization: `Bearer ${await new SignJWT({ roles: ['auditor'], clusters: [] })
            .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
            .setSubject('ann')
            .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
            .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
            .sign(new TextEncoder().encode(TEST_SECRET))}`,
        }),
      ],
      ['a malformed header', async () => ({ authorization: 'Bearer not.a.jwt' })],
    ];

    it.each(refusedTokens)('%s gets 401 unauthenticated', async (_what, headers) => {
      for (const path of paths) {
        const res = await request(t.url)
          .get(path)
          .set(await headers());
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
          path,
          status: 401,
          code: 'unauthenticated',
        });
      }
    });
  });
});
