import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { EventMetadata } from '@fleet/kernel';
import { ReadModelStore } from '@fleet/readmodels/port';
import { EVENT_STORE, READ_MODELS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { appendSession, placement } from '../support/session-events';
import { startApp, TestApp } from '../support/app';

// Fixed past times: billing depends only on the events' times, and no timer of another feature
// fires for them (NODE_STALE_SEC is long).
const T = (min: number, sec = 0, ms = 0) =>
  new Date(Date.UTC(2026, 10, 2, 10, min, sec, ms)).toISOString();
const NODE = 'n-bill-1';
const HOST = 'gpu-bill-01';
const ON_NODE = placement({ nodeId: NODE, hostname: HOST, gpus: ['GPU-b1', 'GPU-b2'] });

const metadata = (at: string): EventMetadata => ({
  correlationId: `corr-${randomUUID()}`,
  causationId: `cause-${randomUUID()}`,
  actor: { sub: 'root', roles: ['admin'] },
  occurredAt: at,
  schemaVersion: 1,
});

type BillRecord = {
  recordId: string;
  sessionId: string;
  owner: string;
  from: string;
  to: string;
  seconds: number;
  amount: number;
};
type Page = { items: BillRecord[]; total: number; nextCursor: string | null };

describe('billing over HTTP', () => {
  let t: TestApp;
  let store: EventStore;
  let admin: Record<string, string>;
  let auditor: Record<string, string>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  const A1 = `s-${randomUUID()}`; // alice: start → pause → resume → terminate
  const B1 = `s-${randomUUID()}`; // bob: one segment, ended by its node going offline
  const A2 = `s-${randomUUID()}`; // alice: terminated while paused

  /** Until the billing projection has handled everything appended so far. */
  const settle = async () => {
    const head = await store.headPosition();
    expect(await t.app.get(SubscriptionRunner).settle(head, ['projection:billing'], 10_000)).toBe(
      true,
    );
  };
  const records = async (query: string, auth: Record<string, string>) =>
    request(t.url).get(`/v1/billing/records${query}`).set(auth);
  const verify = (sessionId: string, auth: Record<string, string>) =>
    request(t.url).get(`/v1/billing/sessions/${sessionId}/verify`).set(auth);

  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '86400' });
    store = t.app.get<EventStore>(EVENT_STORE);
    admin = await t.auth('root', ['admin']);
    auditor = await t.auth('audit', ['auditor']);
    alice = await t.auth('alice', ['user']);
    bob = await t.auth('bob', ['user']);
    await appendSession(store, A1, [
      { requested: T(0), owner: 'alice' },
      { started: T(0), placement: ON_NODE },
      { paused: T(10) }, // 600 s × 2 cards × 3600/h = 1200
      { resumeRequested: T(20) },
      {
        resumed: T(25),
        placement: placement({ nodeId: NODE, hostname: HOST, gpus: ['GPU-b2'], units: 1 }),
      },
      { terminated: T(45, 0, 500) }, // 1200.5 s × 1 card → 1200.5 → 1201 (half up)
    ]);
    await appendSession(store, B1, [
      { requested: T(1), owner: 'bob' },
      { started: T(1), placement: ON_NODE },
      { terminated: T(30), endedAt: T(6), reason: 'node_offline' }, // 300 s × 2 → 600
    ]);
    await appendSession(store, A2, [
      { requested: T(2), owner: 'alice' },
      { started: T(2), placement: ON_NODE },
      { paused: T(3) }, // 60 s × 2 → 120
      { terminated: T(50) },
    ]);
    await settle();
  });
  afterAll(async () => t?.close());

  it('bills start → pause → resume → terminate as exactly two records, the gap unbilled', async () => {
    const res = await records(`?sessionId=${A1}`, alice);
    expect(res.status).toBe(200);
    const page = res.body as Page;
    expect(page.items.map((r) => [r.from, r.to, r.seconds, r.amount])).toEqual([
      [T(0), T(10), 600, 1200],
      [T(25), T(45, 0, 500), 1200.5, 1201],
    ]);
    expect(page.total).toBe(2401);
    expect(page.items[0]).toEqual({
      recordId: expect.any(String),
      sessionId: A1,
      owner: 'alice',
      nodeId: NODE,
      hostname: HOST,
      gpuUuids: ['GPU-b1', 'GPU-b2'],
      gpuModel: 'L40S',
      from: T(0),
      to: T(10),
      seconds: 600,
      unitPricePerHour: 3600,
      amount: 1200,
      currency: 'KRW',
      units: 2,
    });
  });

  it('verifies the session against its events, for its owner and for an auditor', async () => {
    for (const auth of [alice, auditor, admin]) {
      const res = await verify(A1, auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        sessionId: A1,
        recorded: 2401,
        recomputed: 2401,
        ok: true,
        details: [],
      });
    }
  });

  it('adds nothing when a paused session is terminated', async () => {
    const page = (await records(`?sessionId=${A2}`, alice)).body as Page;
    expect(page.items.map((r) => [r.from, r.to, r.amount])).toEqual([[T(2), T(3), 120]]);
    expect((await verify(A2, alice)).body).toMatchObject({ ok: true, recorded: 120 });
  });

  it('bills a node_offline termination to the node’s last report', async () => {
    const page = (await records(`?sessionId=${B1}`, bob)).body as Page;
    expect(page.items.map((r) => [r.from, r.to, r.amount])).toEqual([[T(1), T(6), 600]]);
  });

  describe('when a user asks for someone else’s billing', () => {
    it('refuses another owner’s records with 403', async () => {
      const res = await records('?owner=alice', bob);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    });

    it('shows only the caller’s own records, whatever the other filters', async () => {
      const own = (await records('', bob)).body as Page;
      expect(own.items.map((r) => r.sessionId)).toEqual([B1]);
      expect(own.total).toBe(600);
      const theirs = (await records(`?sessionId=${A1}`, bob)).body as Page;
      expect(theirs).toEqual({ items: [], total: 0, nextCursor: null });
    });

    it('answers 404 for verifying another user’s session, as for one that does not exist', async () => {
      const res = await verify(A1, bob);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect((await verify(`s-${randomUUID()}`, admin)).status).toBe(404);
    });
  });

  describe('totals', () => {
    it('sums every matching record, not only the page, sorted by from', async () => {
      const first = await records('?limit=1', auditor);
      expect(first.status).toBe(200);
      expect(first.body.items).toHaveLength(1);
      expect(first.body.total).toBe(1200 + 1201 + 600 + 120);
      const seen: BillRecord[] = [...first.body.items];
      for (let cursor = first.body.nextCursor; cursor;) {
        const next = await records(`?limit=1&cursor=${encodeURIComponent(cursor)}`, auditor);
        expect(next.body.total).toBe(3121);
        seen.push(...next.body.items);
        cursor = next.body.nextCursor;
      }
      expect(seen.map((r) => r.from)).toEqual([T(0), T(1), T(2), T(25)]);
    });

    it('lists every matching record when no limit or cursor is asked for, as API.md says', async () => {
      // 150 segments: more than a page of the paged listing (100).
      const C1 = `s-${randomUUID()}`;
      const steps: Array<Parameters<typeof appendSession>[2][number]> = [
        { requested: T(60), owner: 'carol' },
        { started: T(60), placement: ON_NODE },
      ];
      for (let i = 0; i < 150; i++) {
        steps.push({ paused: T(60, i * 2 + 1) });
        if (i < 149) {
          steps.push({ resumeRequested: T(60, i * 2 + 1) });
          steps.push({ resumed: T(60, i * 2 + 2), placement: ON_NODE });
        }
      }
      steps.push({ terminated: T(70) });
      await appendSession(store, C1, steps);
      await settle();
      const all = (await records('?owner=carol', admin)).body as Page;
      expect(all.items).toHaveLength(150);
      expect(all.nextCursor).toBeNull();
      expect(all.items.reduce((sum, r) => sum + r.amount, 0)).toBe(all.total);
      expect(all.items.map((r) => r.from)).toEqual([...all.items.map((r) => r.from)].sort());
      // Paging is asked for with limit (or a cursor): pages of it, the same records in order.
      const first = (await records('?owner=carol&limit=100', admin)).body as Page;
      expect(first.items).toHaveLength(100);
      expect(first.total).toBe(all.total);
      const rest = (
        await records(
          `?owner=carol&limit=100&cursor=${encodeURIComponent(first.nextCursor!)}`,
          admin,
        )
      ).body as Page;
      expect([...first.items, ...rest.items]).toEqual(all.items);
      expect(rest.nextCursor).toBeNull();
    });

    it('filters by owner for an admin', async () => {
      const page = (await records('?owner=alice', admin)).body as Page;
      expect(page.total).toBe(2401 + 120);
    });

    it('selects records in [from, to): overlapping it for some time, or starting in it', async () => {
      // 10:05–10:25 overlaps A1's first (…10:10) and B1 (…10:06); A1's second starts at 10:25.
      const page = (await records(`?from=${T(5)}&to=${T(25)}`, admin)).body as Page;
      expect(page.items.map((r) => [r.sessionId, r.from])).toEqual([
        [A1, T(0)],
        [B1, T(1)],
      ]);
      expect(page.total).toBe(1800);
      // A record ending exactly at `from` belongs to the window before (offsets accepted):
      // consecutive windows count it once.
      const edge = (await records(`?from=2026-11-02T19:10:00%2B09:00&to=${T(11)}`, admin))
        .body as Page;
      expect(edge).toMatchObject({ items: [], total: 0 });
      const before = (await records(`?from=${T(5)}&to=${T(10)}`, admin)).body as Page;
      expect(before.items.map((r) => [r.sessionId, r.to])).toEqual([
        [A1, T(10)],
        [B1, T(6)],
      ]);
    });

    it('puts a record of no length in the window it starts in, and in no other', async () => {
      const D1 = `s-${randomUUID()}`;
      await appendSession(store, D1, [
        { requested: T(90), owner: 'dave' },
        { started: T(90), placement: ON_NODE },
        { terminated: T(90) },
      ]);
      const at = async (from: string, to: string) =>
        ((await records(`?owner=dave&from=${from}&to=${to}`, admin)).body as Page).items.map(
          (r) => [r.from, r.to],
        );
      await settle();
      expect(await at(T(90), T(91))).toEqual([[T(90), T(90)]]);
      expect(await at(T(89), T(90))).toEqual([]);
    });

    it('compares bounds finer than a millisecond exactly', async () => {
      // A1's first record ends at 10:10:00.000, before a `from` half a millisecond later.
      const after = (await records(`?from=2026-11-02T10:10:00.0005Z&to=${T(11)}`, admin))
        .body as Page;
      expect(after.items).toEqual([]);
      expect(after.total).toBe(0);
      // It ends after a `from` half a millisecond earlier.
      const just = (await records(`?from=2026-11-02T10:09:59.9995Z&to=${T(11)}`, admin))
        .body as Page;
      expect(just.items.map((r) => [r.sessionId, r.to])).toEqual([[A1, T(10)]]);
      // A1's second record starts at 10:25:00.000, before a `to` half a millisecond later.
      const before = (await records(`?from=${T(24)}&to=2026-11-02T10:25:00.000000001Z`, admin))
        .body as Page;
      expect(before.items.map((r) => [r.sessionId, r.from])).toEqual([[A1, T(25)]]);
    });

    it('refuses a time without a UTC offset and a range that ends before it starts', async () => {
      expect((await records('?from=2026-11-02T10:00:00', admin)).status).toBe(400);
      expect((await records(`?from=${T(20)}&to=${T(10)}`, admin)).status).toBe(400);
      expect((await records('?cursor=junk', admin)).status).toBe(400);
    });

    it('refuses a window whose to is before its from within one millisecond', async () => {
      // Both bounds round to the same millisecond, either way: the window was taken, and
      // answered with the records running across it.
      const inverted = await records(
        `?from=2026-11-02T10:05:00.9185Z&to=2026-11-02T10:05:00.9181Z`,
        admin,
      );
      expect(inverted.status).toBe(400);
      expect(inverted.body.error.code).toBe('validation_failed');
      expect(inverted.body.error.details.fields).toEqual([
        { field: 'to', problems: ['to must not be before from'] },
      ]);
      const offsets = await records(
        `?from=${encodeURIComponent('2026-11-02T19:05:00.00000002+09:00')}&to=2026-11-02T10:05:00.00000001Z`,
        admin,
      );
      expect(offsets.status).toBe(400);
      // The same instant, or to after from by less than a millisecond, is a window: the
      // records running across it (A1's first and B1's).
      for (const to of ['2026-11-02T10:05:00.91850Z', '2026-11-02T10:05:00.9186Z']) {
        const res = await records(`?from=2026-11-02T10:05:00.9185Z&to=${to}`, admin);
        expect(res.status).toBe(200);
        expect(res.body.items.map((r: BillRecord) => r.from)).toEqual([T(0), T(1)]);
      }
    });

    it.each([
      ['from', '2026-12-01T10:00:00,5Z'], // a decimal comma
      ['from', '2026-12-01T1000Z'], // basic time
      ['to', '2026-12-01T10Z'], // hours only
      ['to', '2026-W49-1T10:00:00Z'], // a week date
      ['to', '9999-12-31T23:59:59.9999Z'], // rounds up into year 10000
      ['from', '9999-12-31T23:30:00-01:00'], // 10000-01-01T00:30Z
      ['to', '0000-01-01T00:30:00+01:00'], // before year 0000
    ])(
      'refuses ?%s=%s, an ISO-8601 form Date cannot read or past the years 0000-9999, with 400 naming it',
      async (field, time) => {
        const res = await records(`?${field}=${encodeURIComponent(time)}`, admin);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
          field,
        ]);
      },
    );
  });

  it('takes the last millisecond of year 9999 as a bound', async () => {
    const all = (await records('', admin)).body as Page;
    const res = await records(`?to=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`, admin);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(all.total);
    expect(res.body.items).toHaveLength(all.items.length);
  });

  it('takes bounds in the years 0000-0099: every record after one, none before one', async () => {
    const all = (await records('', admin)).body as Page;
    expect(all.items.length).toBeGreaterThan(0);
    for (const from of ['0000-01-01T00:00:00Z', '0099-12-31T00:00:00Z']) {
      const res = await records(`?from=${from}`, admin);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(all);
    }
    for (const to of ['0050-06-01', '0000-01-01T00:00:00Z']) {
      const res = await records(`?to=${to}`, admin);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ items: [], total: 0 });
    }
  });

  it('keeps every record unchanged when the node is deleted', async () => {
    const before = (await records('', admin)).body as Page;
    const node = `node-${NODE}`;
    await store.append(
      node,
      [
        {
          eventId: randomUUID(),
          type: 'NodeRegistered.v1',
          data: {
            nodeId: NODE,
            clusterId: 'c-bill',
            hostname: HOST,
            role: 'cpu',
            labels: {},
            mode: 'shared',
            capacity: { cpu: 4, memoryGiB: 8, diskGiB: 100 },
            gpus: [],
            kubeletReady: true,
            unschedulable: false,
            observedAt: null,
            registeredAt: T(0),
          },
          metadata: metadata(T(0)),
        },
        {
          eventId: randomUUID(),
          type: 'NodeWentOffline.v1',
          data: {
            nodeId: NODE,
            clusterId: 'c-bill',
            hostname: HOST,
            reason: 'heartbeat_timeout',
            from: 'ready',
            lastSeenAt: T(55),
            at: T(56),
          },
          metadata: metadata(T(56)),
        },
        {
          eventId: randomUUID(),
          type: 'NodeDeleted.v1',
          data: { nodeId: NODE, clusterId: 'c-bill', hostname: HOST, at: T(57) },
          metadata: metadata(T(57)),
        },
      ],
      'no_stream',
    );
    await settle();
    const after = (await records('', admin)).body as Page;
    expect(after).toEqual(before);
    const ofAlice = after.items.filter((r) => r.sessionId === A1 || r.sessionId === A2);
    expect(ofAlice.length).toBeGreaterThan(0);
    expect(ofAlice.every((r) => r.owner === 'alice')).toBe(true);
    expect((await verify(A1, auditor)).body.ok).toBe(true);
  });

  it('reports the lines that differ when the read model disagrees with the log', async () => {
    // Only possible by writing around the projection: an extra record for A2.
    const [doc] = (await records(`?sessionId=${A2}`, admin)).body.items as BillRecord[];
    const forged = { ...doc, recordId: 'forged-1', from: T(40), to: T(41), amount: 7 };
    await t.app
      .get<ReadModelStore>(READ_MODELS)
      .commit(
        'tamper',
        [{ op: 'insert', collection: 'billing_records', doc: { _id: 'forged-1', ...forged } }],
        0,
      );
    const res = await verify(A2, auditor);
    expect(res.body).toEqual({
      sessionId: A2,
      recorded: 127,
      recomputed: 120,
      ok: false,
      details: [
        {
          index: 1,
          problem: 'unexpected_record',
          recordId: 'forged-1',
          recorded: { from: T(40), to: T(41), amount: 7 },
          recomputed: null,
        },
      ],
    });
  });
});
