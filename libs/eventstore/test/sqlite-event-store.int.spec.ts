import Database from 'better-sqlite3';
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConcurrencyConflictError, NewEvent } from '../src/port';
import { EventStoreInUseError, SqliteEventStore } from '../src/sqlite-event-store';
import { eventStoreContract } from './event-store.contract';
import { testEvent } from './support/test-event';

const tempFile = (): { file: string; dir: string } => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `eventstore-${randomUUID().slice(0, 8)}-`));
  return { dir, file: path.join(dir, 'events.db') };
};

const event = (type = 'TestHappened.v1'): NewEvent => testEvent(type, { at: Date.now() });

eventStoreContract('SqliteEventStore', async () => {
  const { dir, file } = tempFile();
  const store = new SqliteEventStore({ file, pollMs: 50 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

eventStoreContract('SqliteEventStore (exclusive)', async () => {
  const { dir, file } = tempFile();
  const store = new SqliteEventStore({ file, pollMs: 50, exclusive: true });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteEventStore opened exclusively', () => {
  let dir: string;
  let file: string;
  beforeEach(() => ({ dir, file } = tempFile()));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second store on the file, exclusive or not, until the first closes', async () => {
    const first = new SqliteEventStore({ file, exclusive: true });
    await first.append('s', [event()], 'no_stream');
    expect(() => new SqliteEventStore({ file, exclusive: true, openWaitMs: 50 })).toThrow(
      EventStoreInUseError,
    );
    expect(() => new SqliteEventStore({ file, openWaitMs: 50 })).toThrow(/locked/);
    await first.close();
    const second = new SqliteEventStore({ file, exclusive: true, openWaitMs: 50 });
    expect(await second.streamRevision('s')).toBe(0);
    await second.close();
  });

  it('is free again when the process holding it is killed', async () => {
    const holder = fork(path.join(__dirname, 'support/hold-exclusive.ts'), [file], {
      execArgv: ['--expose-gc', '--require', 'tsx/cjs'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        holder.once('message', () => resolve());
        holder.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
      });
      expect(() => new SqliteEventStore({ file, exclusive: true, openWaitMs: 50 })).toThrow(
        EventStoreInUseError,
      );
    } finally {
      holder.kill('SIGKILL');
      await exited;
    }
    const mine = new SqliteEventStore({ file, exclusive: true, openWaitMs: 50 });
    // Everything the holder acknowledged is there.
    expect(await mine.streamRevision('held')).toBe(0);
    await mine.close();
  });

  it('never reads data_version: its heads cannot be moved by anyone else', async () => {
    const store = new SqliteEventStore({ file, exclusive: true });
    const versionReads = jest.spyOn(
      (store as unknown as { stmt: { dataVersion: { get(): unknown } } }).stmt.dataVersion,
      'get',
    );
    await store.append('h', [event()], 'no_stream');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.streamRevision('h')).toBe(0);
    expect(await store.streamRevisions(['h', 'none'])).toEqual([0, null]);
    expect(versionReads).not.toHaveBeenCalled();
    await store.close();
  });
});

describe('SqliteEventStore', () => {
  let dir: string;
  let file: string;
  let store: SqliteEventStore;

  beforeEach(() => {
    ({ dir, file } = tempFile());
    store = new SqliteEventStore({ file, pollMs: 50 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('when another connection tries to rewrite history', () => {
    it('refuses UPDATE and DELETE on the events table', async () => {
      await store.append('node-1', [event()], 'no_stream');
      const raw = new Database(file);
      try {
        expect(() => raw.prepare("UPDATE events SET type = 'Forged.v1'").run()).toThrow(
          /append-only/,
        );
        expect(() => raw.prepare('DELETE FROM events').run()).toThrow(/append-only/);
        expect(raw.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1);
      } finally {
        raw.close();
      }
    });
  });

  it('hands out sparse positions, growing by more than one, in one append and across appends', async () => {
    await store.append('node-1', [event(), event(), event()], 'no_stream');
    await Promise.all([
      store.append('node-2', [event()], 'no_stream'),
      store.append('node-3', [event()], 'no_stream'),
    ]);
    const positions = (await store.readAll({ limit: 10 })).map((e) => e.position);
    expect(positions).toHaveLength(5);
    for (let i = 1; i < positions.length; i++) {
      expect(positions[i]).toBeGreaterThan(positions[i - 1] + 1);
    }
    expect(positions[0]).toBeGreaterThan(1);
    // Reopened, the log goes on past its tail: positions never repeat or go back.
    await store.close();
    store = new SqliteEventStore({ file });
    const next = await store.append('node-4', [event()], 'no_stream');
    expect(next.position).toBeGreaterThan(positions[4] + 1);
  });

  it('keeps events across close and reopen', async () => {
    await store.append('node-1', [event(), event()], 'no_stream');
    await store.close();
    store = new SqliteEventStore({ file });
    expect(await store.streamRevision('node-1')).toBe(1);
    expect(await store.readAll({ limit: 10 })).toHaveLength(2);
    expect((await store.append('node-1', [event()], 1)).revision).toBe(2);
  });

  it('writes pending appends before closing', async () => {
    const pending = store.append('node-1', [event()], 'no_stream');
    await store.close();
    await expect(pending).resolves.toMatchObject({ appended: true });
    store = new SqliteEventStore({ file });
    expect(await store.streamRevision('node-1')).toBe(0);
  });

  it('is durable by default: WAL with synchronous FULL', () => {
    const raw = new Database(file);
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
    // synchronous is per connection: ask the store's own.
    const db = (store as unknown as { db: Database.Database }).db;
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
  });

  describe('when many callers append at once', () => {
    it('group-commits them in far fewer transactions than appends', async () => {
      const before = store.stats;
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          store.append(`session-${i}`, [event()], 'no_stream'),
        ),
      );
      const after = store.stats;
      expect(results.every((r) => r.appended)).toBe(true);
      expect(after.appends - before.appends).toBe(1000);
      expect(after.events - before.events).toBe(1000);
      expect(after.flushes - before.flushes).toBeLessThanOrEqual(10);
      const positions = results.map((r) => r.position);
      expect(new Set(positions).size).toBe(1000);
    });

    it('validates each append of a batch on its own, seeing earlier ones', async () => {
      const results = await Promise.allSettled([
        store.append('node-1', [event()], 'no_stream'),
        store.append('node-1', [event()], 'no_stream'),
        store.append('node-1', [event()], 0),
        store.append('node-2', [event()], 3),
        store.append('node-3', [event()], 'any'),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      expect(await store.streamRevision('node-1')).toBe(1);
      expect(await store.streamRevision('node-2')).toBeNull();
    });

    it('refuses an unserializable payload alone', async () => {
      const cyclic: { self?: unknown } = {};
      cyclic.self = cyclic;
      const results = await Promise.allSettled([
        store.append('node-1', [{ ...event(), data: cyclic }], 'no_stream'),
        store.append('node-2', [event()], 'no_stream'),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    });
  });

  describe('when two stores share one file', () => {
    it('lets exactly one of two racing no_stream appends win', async () => {
      const other = new SqliteEventStore({ file });
      try {
        const results = await Promise.allSettled([
          store.append('node-x', [event()], 'no_stream'),
          other.append('node-x', [event()], 'no_stream'),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(ConcurrencyConflictError);
        expect(await store.readStream('node-x')).toHaveLength(1);
      } finally {
        await other.close();
      }
    });

    it("notices the other store's appends by polling", async () => {
      const other = new SqliteEventStore({ file });
      try {
        const noticed = new Promise<void>((resolve) => {
          const stop = store.watch(() => {
            stop();
            resolve();
          });
        });
        await other.append('node-y', [event()], 'no_stream');
        await noticed;
        expect(await store.streamRevision('node-y')).toBe(0);
      } finally {
        await other.close();
      }
    });
  });
});
