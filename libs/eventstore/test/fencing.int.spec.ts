import { randomUUID } from 'node:crypto';
import {
  EventStore,
  LEADERSHIP_STREAM,
  LEADERSHIP_TAKEN,
  NewEvent,
  StaleLeaderError,
} from '../src/port';
import { PostgresEventStore } from '../src/postgres-event-store';
import { SqliteEventStore } from '../src/sqlite-event-store';
import { createTestDatabase } from './support/postgres-database';
import { testEvent } from './support/test-event';

/** An event written by the leader's periodic work in lease term `epoch`. */
const inTerm = (epoch: number, type = 'PoolScaled.v1', eventId = randomUUID()): NewEvent => {
  const e = testEvent(type, { epoch });
  return { ...e, eventId, metadata: { ...e.metadata, leaderEpoch: epoch } };
};

/** A leader recording its term, as the Leadership service does before its loops append. */
const recordTerm = (store: EventStore, epoch: number, expected: number | 'no_stream') =>
  store.append(LEADERSHIP_STREAM, [inTerm(epoch, LEADERSHIP_TAKEN)], expected);

type Replicas = { a: EventStore; b: EventStore; cleanup: () => Promise<void> };

/** Two stores on one log: two replicas' connections (PostgreSQL), or one store twice (SQLite). */
const adapters: Array<[string, () => Promise<Replicas>]> = [
  [
    'PostgreSQL',
    async () => {
      const db = await createTestDatabase('fence_test');
      const a = new PostgresEventStore({ url: db.url, pollMs: 100 });
      const b = new PostgresEventStore({ url: db.url, pollMs: 100 });
      return {
        a,
        b,
        cleanup: async () => {
          await Promise.all([a.close(), b.close()]);
          await db.drop();
        },
      };
    },
  ],
  [
    'SQLite',
    async () => {
      const store = new SqliteEventStore({ file: ':memory:' });
      return { a: store, b: store, cleanup: () => store.close() };
    },
  ],
];

describe.each(adapters)('fencing of a stale leader (%s)', (_name, open) => {
  let replicas: Replicas;
  beforeEach(async () => {
    replicas = await open();
  });
  afterEach(() => replicas.cleanup());

  it("refuses the late write of a leader whose term another replica's newer term ended", async () => {
    const { a, b } = replicas;
    await recordTerm(a, 1, 'no_stream');
    await a.append('pool-p1', [inTerm(1)], 'no_stream');
    // Replica b took the lease (term 2) and recorded it; a has not noticed yet.
    await recordTerm(b, 2, 0);
    const head = await a.headPosition();
    const late = a.append('pool-p1', [inTerm(1)], 0);
    await expect(late).rejects.toBeInstanceOf(StaleLeaderError);
    await expect(late).rejects.toMatchObject({ code: 'stale_leader', epoch: 1, newest: 2 });
    expect(await a.streamRevision('pool-p1')).toBe(0);
    expect(await a.headPosition()).toBe(head);
    // The new term writes; a request's append (no term) is never fenced.
    await expect(b.append('pool-p1', [inTerm(2)], 0)).resolves.toMatchObject({ revision: 1 });
    await expect(a.append('node-n1', [testEvent()], 'no_stream')).resolves.toMatchObject({
      appended: true,
    });
  });

  it('fences the appends that follow a term recorded in the same batch, not their neighbours', async () => {
    const { a } = replicas;
    await recordTerm(a, 4, 'no_stream');
    // One turn: one transaction. Term 5 is recorded first, so term 4's write after it is late.
    const results = await Promise.allSettled([
      a.append('pool-p2', [inTerm(4)], 'no_stream'),
      recordTerm(a, 5, 0),
      a.append('pool-p3', [inTerm(4)], 'no_stream'),
      a.append('node-n2', [testEvent()], 'no_stream'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(StaleLeaderError);
    expect(await a.streamRevision('pool-p3')).toBeNull();
  });

  it("answers a stale term's replay of what it wrote in its own term as a no-op", async () => {
    const { a, b } = replicas;
    await recordTerm(a, 1, 'no_stream');
    const written = inTerm(1);
    await a.append('pool-p4', [written], 'no_stream');
    await recordTerm(b, 2, 0);
    await expect(a.append('pool-p4', [written], 'no_stream')).resolves.toMatchObject({
      appended: false,
      revision: 0,
    });
  });

  it('lets only one of two leaders record the same term', async () => {
    const { a, b } = replicas;
    await recordTerm(a, 1, 'no_stream');
    const both = await Promise.allSettled([recordTerm(a, 2, 0), recordTerm(b, 2, 0)]);
    expect(both.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await a.streamRevision(LEADERSHIP_STREAM)).toBe(1);
  });
});
