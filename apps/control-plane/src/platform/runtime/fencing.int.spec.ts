import { Logger } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { LEADERSHIP_STREAM, StaleLeaderError } from '@fleet/eventstore/port';
import { PostgresEventStore } from '@fleet/eventstore/postgres-event-store';
import { InProcessLeaderLease, MemoryLeaseStore } from '@fleet/jobs/in-process-leader-lease';
import { leaseTiming } from '@fleet/jobs/leader-lease';
import { Decider, EventCodec, Message, systemContext, uuidFrom } from '@fleet/kernel';
import {
  TestDatabase,
  createTestDatabase,
} from '../../../../../libs/eventstore/test/support/postgres-database';
import { leadershipAggregate } from './leadership-terms';
import { Leadership } from './leadership.service';

/** A pool's size as a periodic loop (the autoscaler) sets it: the shape of a leader's command. */
type Resize = Message<'Resize', { size: number }>;
type Resized = Message<'Resized', { size: number }>;
const resizing = {
  name: 'resizing',
  codec: new EventCodec<Resized>({ Resized: 1 }),
  decider: {
    initialState: () => ({ size: 0 }),
    evolve: (_s, e) => ({ size: e.data.size }),
    decide: (c, s) => (c.data.size === s.size ? [] : [{ type: 'Resized', data: c.data }]),
  } as Decider<Resize, Resized, { size: number }>,
};

const eventually = async (check: () => boolean, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** A replica: its own connection to the shared log, pipeline, and part in one election. */
const replica = (url: string, leases: MemoryLeaseStore) => {
  const store = new PostgresEventStore({ url, pollMs: 100 });
  const pipeline = new CommandPipeline(store);
  const lease = new InProcessLeaderLease({ store: leases, timing: leaseTiming(300) });
  return { store, pipeline, lease, leadership: new Leadership(lease, pipeline) };
};

describe('fencing: a leader that lost the lease cannot write late (PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(() => Logger.overrideLogger(false));
  beforeEach(async () => {
    db = await createTestDatabase('fence_app');
  });
  afterEach(() => db.drop());

  it("refuses the old leader's periodic command once the new leader recorded its term, appending nothing", async () => {
    const leases = new MemoryLeaseStore();
    const a = replica(db.url, leases);
    const b = replica(db.url, leases);
    try {
      await a.leadership.start();
      const term = a.leadership.epoch()!;
      expect(await a.leadership.termRecorded(term)).toBe(true);
      const ctx = (n: number) =>
        systemContext(uuidFrom('resize', String(n)), { leaderEpoch: term });
      const resize = (size: number): Resize => ({ type: 'Resize', data: { size } });
      await a.pipeline.handle(resizing, 'pool-p1', resize(3), ctx(1));

      // a stops renewing (a frozen process keeps its state); b takes over and records term 2.
      a.lease.abandon();
      await b.leadership.start();
      await eventually(() => b.leadership.epoch() !== null);
      const next = b.leadership.epoch()!;
      expect(next).toBeGreaterThan(term);
      expect(await b.leadership.termRecorded(next)).toBe(true);

      // a wakes up and finishes the period it had started, in its old term.
      const head = await a.store.headPosition();
      const late = a.pipeline.handle(resizing, 'pool-p1', resize(5), ctx(2));
      await expect(late).rejects.toBeInstanceOf(StaleLeaderError);
      expect(await a.store.headPosition()).toBe(head);
      expect(await a.store.streamRevision('pool-p1')).toBe(0);
      // The new leader's own command goes through.
      const own = systemContext(uuidFrom('resize', '3'), { leaderEpoch: next });
      await expect(b.pipeline.handle(resizing, 'pool-p1', resize(5), own)).resolves.toMatchObject({
        appended: true,
      });
      const terms = await a.store.readStream(LEADERSHIP_STREAM);
      expect(terms.map((e) => (e.data as { epoch: number }).epoch)).toEqual([term, next]);
    } finally {
      await b.leadership.resign();
      await Promise.all([a.store.close(), b.store.close()]);
    }
  });

  it('steps a leader down whose lease store handed out a term older than the log holds', async () => {
    const shared = new MemoryLeaseStore();
    const a = replica(db.url, shared);
    try {
      await a.leadership.start();
      expect(await a.leadership.termRecorded(a.leadership.epoch()!)).toBe(true);
      await a.leadership.resign();
      // Redis restarted empty: the next replica is handed term 1 again.
      shared.forget();
      const b = replica(db.url, shared);
      try {
        // Another term in the log first (as if a second replica had led in term 2).
        const two = systemContext(uuidFrom('leadership-term', '2'), { leaderEpoch: 2 });
        await b.pipeline.handle(
          leadershipAggregate,
          LEADERSHIP_STREAM,
          { type: 'TakeLeadership', data: { epoch: 2, at: new Date().toISOString() } },
          two,
        );
        await b.leadership.start();
        expect(b.leadership.epoch()).toBe(1);
        expect(await b.leadership.termRecorded(1)).toBe(false);
        // It took a term above the log's newest and records that one.
        await eventually(() => (b.leadership.epoch() ?? 0) > 2);
        expect(await b.leadership.termRecorded(b.leadership.epoch()!)).toBe(true);
      } finally {
        await b.leadership.resign();
        await b.store.close();
      }
    } finally {
      await a.store.close();
    }
  });
});
