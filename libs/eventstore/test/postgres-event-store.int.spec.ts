import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { UnavailableError } from '@fleet/kernel';
import { createEventStore } from '../src';
import {
  AppendResult,
  ConcurrencyConflictError,
  EventStore,
  IdempotencyMismatchError,
  LOG_START,
  LogPosition,
  NewEvent,
  StoredEvent,
} from '../src/port';
import { reachPostgres } from '../src/postgres-connection';
import { PostgresEventStore, PostgresEventStoreOptions } from '../src/postgres-event-store';
import { eventStoreContract } from './event-store.contract';
import { TestDatabase, createTestDatabase } from './support/postgres-database';
import { testEvent } from './support/test-event';

eventStoreContract('PostgresEventStore', async () => {
  const db = await createTestDatabase();
  const store = new PostgresEventStore({ url: db.url, pollMs: 100 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await db.drop();
    },
  };
});

const event = (type = 'TestHappened.v1', data: unknown = { at: Date.now() }): NewEvent =>
  testEvent(type, data);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check` holds, polling; fails the test after `ms`. */
const eventually = async (check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(20);
  }
};

/** Whether `promise` has settled, without waiting for it. */
const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  const marker = Symbol('pending');
  const first = await Promise.race([
    promise.then(() => 'done').catch(() => 'done'),
    sleep(0).then(() => marker),
  ]);
  return first !== marker;
};

/**
 * A catch-up subscriber as the projections run one: reads `readAll({ after: checkpoint })` in a
 * loop and moves its checkpoint to the last event it read, until stopped.
 */
const subscriber = (store: EventStore, from: LogPosition) => {
  const seen: StoredEvent[] = [];
  let checkpoint = from;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const page = await store.readAll({ after: checkpoint, limit: 50 });
      seen.push(...page);
      if (page.length > 0) checkpoint = page[page.length - 1].position;
      else await sleep(5);
    }
  })().finally(() => (stopped = true));
  // A failed test may close the store under the loop: its error is reported by drain() alone.
  done.catch(() => undefined);
  return {
    seen,
    /** Reads until the log's end, then stops. */
    async drain(): Promise<StoredEvent[]> {
      stopped = true;
      await done;
      for (;;) {
        const page = await store.readAll({ after: checkpoint, limit: 500 });
        if (page.length === 0) return seen;
        seen.push(...page);
        checkpoint = page[page.length - 1].position;
      }
    },
  };
};

describe('PostgresEventStore', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let raw: Client;
  const logged: string[] = [];
  const open = (options: Partial<PostgresEventStoreOptions> = {}): PostgresEventStore =>
    new PostgresEventStore({ url: db.url, log: (message) => logged.push(message), ...options });

  beforeEach(async () => {
    logged.length = 0;
    db = await createTestDatabase();
    store = open();
    await store.ping();
    raw = new Client({ connectionString: db.url });
    raw.on('error', () => undefined);
    await raw.connect();
  });
  afterEach(async () => {
    await raw.end().catch(() => undefined);
    await store.close();
    await db.drop();
  });

  describe('global order', () => {
    it('never lets a reader skip an append that commits late with a lower position', async () => {
      const head = await store.headPosition();
      const reader = subscriber(store, head);
      // Transaction A (any writer, here a hand-written INSERT) takes its position and stays open.
      await raw.query('BEGIN');
      const a = await raw.query<{ position: string }>(
        `INSERT INTO events (event_id, stream_id, revision, type, data, metadata)
         VALUES ($1, 'late-a', 0, 'Late.v1', '{}', '{}') RETURNING position`,
        [randomUUID()],
      );
      const positionA = Number(a.rows[0].position);
      // B is appended meanwhile: it cannot take a position, let alone commit, before A ends.
      const b = store.append('late-b', [event('Late.v1')], 'no_stream');
      await sleep(300);
      expect(await settled(b)).toBe(false);
      expect(await store.readAll({ after: head, limit: 10 })).toEqual([]);
      await raw.query('COMMIT');
      const appended: AppendResult = await b;
      expect(appended.position).toBeGreaterThan(positionA);
      await eventually(() => reader.seen.length >= 2);
      const seen = await reader.drain();
      expect(seen.map((e) => [e.streamId, e.position])).toEqual([
        ['late-a', positionA],
        ['late-b', appended.position],
      ]);
    });

    it('gives a reader every event exactly once while two replicas append at once', async () => {
      const other = open();
      try {
        const head = await store.headPosition();
        const reader = subscriber(store, head);
        const written: string[] = [];
        const writer = async (replica: EventStore, name: string): Promise<void> => {
          let revision: number | 'no_stream' = 'no_stream';
          for (let i = 0; i < 15; i++) {
            const batch = [event(), event()];
            revision = (await replica.append(name, batch, revision)).revision;
            written.push(...batch.map((e) => e.eventId));
          }
        };
        await Promise.all(
          Array.from({ length: 16 }, (_, c) => writer(c % 2 ? store : other, `replica-${c}`)),
        );
        const seen = await reader.drain();
        expect(seen.map((e) => e.eventId).sort()).toEqual([...written].sort());
        for (let i = 1; i < seen.length; i++) {
          expect(seen[i].position).toBeGreaterThan(seen[i - 1].position);
        }
      } finally {
        await other.close();
      }
    });

    it('orders positions by the batch: each stream by revision, appends as they were made', async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          store.append(`interleaved-${i % 4}`, [event(), event(), event()], 'any'),
        ),
      );
      for (let i = 1; i < results.length; i++) {
        expect(results[i].position).toBeGreaterThan(results[i - 1].position);
      }
      const all = await store.readAll({ after: LOG_START, limit: 1000 });
      expect(all).toHaveLength(120);
      const last = new Map<string, number>();
      for (const e of all) {
        expect(e.revision).toBe((last.get(e.streamId) ?? -1) + 1);
        last.set(e.streamId, e.revision);
      }
      expect(store.stats.flushes).toBeLessThanOrEqual(2);
    });
  });

  describe('group commit', () => {
    it('judges each append of one transaction on its own', async () => {
      const stored = event();
      const partial = event();
      await store.append('taken', [stored], 'no_stream');
      await store.append('partly', [partial], 'no_stream');
      const before = store.stats.flushes;
      const outcomes = await Promise.allSettled([
        store.append('fresh-1', [event()], 'no_stream'),
        store.append('taken', [event()], 'no_stream'), // conflict
        store.append('taken', [stored], 'no_stream'), // replay: a no-op
        store.append('partly', [partial, event()], 'any'), // part stored: refused
        store.append('fresh-2', [event(), event()], 'no_stream'),
      ]);
      expect(store.stats.flushes - before).toBe(1);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      const reason = (i: number): unknown => (outcomes[i] as PromiseRejectedResult).reason;
      expect(reason(1)).toBeInstanceOf(ConcurrencyConflictError);
      expect((reason(1) as ConcurrencyConflictError).actual).toBe(0);
      expect(reason(3)).toBeInstanceOf(IdempotencyMismatchError);
      expect((outcomes[2] as PromiseFulfilledResult<AppendResult>).value).toMatchObject({
        appended: false,
        revision: 0,
      });
      expect(await store.streamRevisions(['fresh-1', 'taken', 'partly', 'fresh-2'])).toEqual([
        0, 0, 0, 1,
      ]);
    });

    it('sees the appends before it in the same transaction, on the same stream', async () => {
      const first = event();
      await store.append('s', [first], 'no_stream');
      const second = event();
      const before = store.stats.flushes;
      const [a, replay, c, repeated] = await Promise.all([
        store.append('s', [second], 0),
        store.append('s', [first], 'any'), // a replay: the head is what `a` just wrote
        store.append('s', [event()], 1),
        store.append('s', [second], 'any'), // repeats `a`'s id: judged in the next transaction
      ]);
      expect(a).toMatchObject({ appended: true, revision: 1 });
      expect(replay).toEqual({ appended: false, revision: 1, position: a.position });
      expect(c).toMatchObject({ appended: true, revision: 2 });
      expect(c.position).toBeGreaterThan(a.position);
      expect(repeated).toEqual({ appended: false, revision: 2, position: c.position });
      expect(store.stats.flushes - before).toBe(2);
    });

    it('splits a turn larger than one transaction may carry, in order', async () => {
      const small = open({ maxBatchEvents: 5 });
      try {
        await small.ping();
        const results = await Promise.all(
          [0, 1, 2, 3].map((i) => small.append(`split-${i}`, [event(), event()], 'no_stream')),
        );
        expect(small.stats.flushes).toBe(2);
        for (let i = 1; i < results.length; i++) {
          expect(results[i].position).toBeGreaterThan(results[i - 1].position);
        }
      } finally {
        await small.close();
      }
    });

    it('refuses a malformed append alone, before it reaches a transaction', async () => {
      const id = randomUUID();
      const twice: NewEvent[] = [
        { ...event(), eventId: id },
        { ...event(), eventId: id },
      ];
      const outcomes = await Promise.allSettled([
        store.append('ok', [event()], 'no_stream'),
        store.append('bad', twice, 'no_stream'),
        store.append('nul\u0000', [event()], 'no_stream'),
        store.append('negative', [event()], -5),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual([
        'fulfilled',
        'rejected',
        'rejected',
        'rejected',
      ]);
      expect((outcomes[3] as PromiseRejectedResult).reason).toBeInstanceOf(
        ConcurrencyConflictError,
      );
      expect(await store.streamRevision('bad')).toBeNull();
    });
  });

  describe('append-only by the database itself', () => {
    beforeEach(async () => {
      await store.append('history', [event()], 'no_stream');
    });

    it.each([
      ['UPDATE', "UPDATE events SET type = 'Rewritten.v1'"],
      ['DELETE', 'DELETE FROM events'],
      ['TRUNCATE', 'TRUNCATE events'],
    ])('refuses %s, even to a superuser', async (op, sql) => {
      await expect(raw.query(sql)).rejects.toThrow(`events are append-only: ${op} is forbidden`);
      expect(await store.readStream('history')).toHaveLength(1);
    });

    it('refuses a position chosen by the writer', async () => {
      await expect(
        raw.query(
          `INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata)
           VALUES (1000000, 'x', 'forged', 0, 'Forged.v1', '{}', '{}')`,
        ),
      ).rejects.toThrow(/non-DEFAULT value into column "position"/);
    });

    it('has withdrawn UPDATE, DELETE and TRUNCATE from the owner', async () => {
      const { rows } = await raw.query<{ privilege_type: string }>(
        `SELECT privilege_type FROM information_schema.table_privileges
         WHERE table_name = 'events' AND grantee = current_user`,
      );
      const privileges = rows.map((r) => r.privilege_type);
      expect(privileges).toEqual(expect.arrayContaining(['INSERT', 'SELECT']));
      expect(privileges).not.toContain('UPDATE');
      expect(privileges).not.toContain('DELETE');
      expect(privileges).not.toContain('TRUNCATE');
    });
  });

  describe('schema migrations', () => {
    it('migrates once when several processes start at once', async () => {
      const fresh = await createTestDatabase();
      const stores = Array.from({ length: 3 }, () => new PostgresEventStore({ url: fresh.url }));
      try {
        await Promise.all(stores.map((s, i) => s.append(`start-${i}`, [event()], 'no_stream')));
        const check = new Client({ connectionString: fresh.url });
        await check.connect();
        try {
          const { rows } = await check.query(
            'SELECT version FROM schema_migrations ORDER BY version',
          );
          expect(rows.map((r: { version: number }) => r.version)).toEqual([1, 2]);
        } finally {
          await check.end();
        }
        expect(await stores[0].readAll({ limit: 10 })).toHaveLength(3);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await fresh.drop();
      }
    });

    it('refuses a schema migrated by a newer release', async () => {
      await raw.query(`INSERT INTO schema_migrations (version, name) VALUES (99, 'future')`);
      const late = open();
      try {
        await expect(late.ping()).rejects.toThrow(/migration 99.*newer release/);
      } finally {
        await late.close();
      }
    });
  });

  describe('wake-ups', () => {
    it('wakes a watcher on another replica by NOTIFY, and again after its LISTEN connection is lost', async () => {
      // Polling an hour apart: only NOTIFY (or the reconnection itself) can wake this watcher.
      const watcher = open({ pollMs: 3_600_000, relistenMs: 50 });
      let wakes = 0;
      const stop = watcher.watch(() => wakes++);
      try {
        const listening = async (): Promise<number[]> =>
          (
            await raw.query<{ pid: number }>(
              `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`,
              [db.name],
            )
          ).rows.map((r) => r.pid);
        await eventually(async () => (await listening()).length === 1);
        await store.append('notified', [event()], 'no_stream');
        await eventually(() => wakes > 0);

        const [pid] = await listening();
        const before = wakes;
        await raw.query('SELECT pg_terminate_backend($1)', [pid]);
        // Told to catch up at once (commits made while nobody listened are read from checkpoints).
        await eventually(() => wakes > before);
        await eventually(async () => {
          const now = await listening();
          return now.length === 1 && now[0] !== pid;
        });
        expect(logged.some((line) => /LISTEN connection failed/.test(line))).toBe(true);
        const again = wakes;
        await store.append('notified', [event()], 0);
        await eventually(() => wakes > again);
      } finally {
        stop();
        await watcher.close();
      }
    });

    it('wakes a watcher by polling when notifications cannot arrive', async () => {
      const watcher = open({ pollMs: 50 });
      let wakes = 0;
      const stop = watcher.watch(() => wakes++);
      try {
        await sleep(200);
        const before = wakes;
        // A commit without NOTIFY: the trigger is bypassed for this one transaction.
        await raw.query('BEGIN');
        await raw.query("SET LOCAL session_replication_role = 'replica'");
        await raw.query(
          `INSERT INTO events (event_id, stream_id, revision, type, data, metadata)
           VALUES ($1, 'silent', 0, 'Silent.v1', '{}', '{}')`,
          [randomUUID()],
        );
        await raw.query('COMMIT');
        await eventually(() => wakes > before);
      } finally {
        stop();
        await watcher.close();
      }
    });
  });

  describe('when PostgreSQL fails', () => {
    it('reports an unreachable server as unavailable, without the password and without an unhandled rejection', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      const lines: string[] = [];
      // Port 1 on the loopback: refused at once.
      const down = new PostgresEventStore({
        url: 'postgres://fleet:Sup3rSecret@127.0.0.1:1/fleet',
        log: (message, error) => lines.push(`${message} ${String(error)}`),
        pollMs: 20,
        relistenMs: 20,
      });
      try {
        const stop = down.watch(() => undefined);
        const failure = await down.append('s', [event()], 'no_stream').catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(UnavailableError);
        await expect(down.ping()).rejects.toBeInstanceOf(UnavailableError);
        await expect(down.readAll({ limit: 1 })).rejects.toBeInstanceOf(UnavailableError);
        await sleep(200);
        stop();
        expect(lines.length).toBeGreaterThan(0);
        // Throttled: one line per kind of failure, not one per poll or reconnection.
        expect(lines.length).toBeLessThan(6);
        for (const text of [...lines, String(failure), JSON.stringify(failure)]) {
          expect(text).not.toContain('Sup3rSecret');
        }
      } finally {
        await down.close();
        await sleep(50);
        process.off('unhandledRejection', onUnhandled);
      }
      expect(unhandled).toEqual([]);
    });

    it('recovers when the server terminates its connections', async () => {
      await store.append('before', [event()], 'no_stream');
      await raw.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [db.name],
      );
      // The idle pooled connections die; each failure is logged, none thrown.
      await eventually(() => logged.some((line) => /idle connection failed/.test(line)));
      const result = await store.append('after', [event()], 'no_stream');
      expect(result.appended).toBe(true);
      expect(await store.streamRevisions(['before', 'after'])).toEqual([0, 0]);
    });
  });

  it('answers the start’s try at the server, naming a database that does not exist', async () => {
    await expect(reachPostgres(db.url, 2_000)).resolves.toBeUndefined();
    const missing = db.url.replace(db.name, `${db.name}_missing`);
    await expect(reachPostgres(missing, 2_000)).rejects.toThrow(
      `database "${db.name}_missing" does not exist`,
    );
  });

  it('is what createEventStore builds for postgres:// and postgresql:// URLs', async () => {
    for (const url of [db.url, db.url.replace(/^postgres:/, 'postgresql:')]) {
      const built = createEventStore({ eventstoreUrl: url, dataDir: '/nonexistent' });
      try {
        expect(built).toBeInstanceOf(PostgresEventStore);
        await built.ping();
      } finally {
        await built.close();
      }
    }
  });
});
