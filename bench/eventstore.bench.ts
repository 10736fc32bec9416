import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { EventMetadata, eventIdFor, uuidV7 } from '@fleet/kernel';
import { LOG_START, NewEvent } from '@fleet/eventstore/port';
import {
  EVENTS_SCHEMA,
  SQLITE_TUNING,
  SqliteEventStore,
} from '@fleet/eventstore/sqlite-event-store';
import { postgresEventStoreFigures } from './eventstore-postgres';
import { BenchSuite, Figure, machine, median, medianOf } from './lib';

const BATCH = 100;
const WRITE_EVENTS = 20_000;
const CALLERS = 100;
const CONCURRENT_MS = 3_000;
const REPLAY_EVENTS = 1_000_000;
const REPLAY_PAGE = 10_000;
const TYPES = Array.from({ length: 10 }, (_, i) => `NodeThingHappened${i}.v1`);

type IdScheme = 'production' | 'random';

const metadata = (commandId: string): EventMetadata => ({
  correlationId: commandId,
  causationId: commandId,
  actor: { sub: 'operator-1', roles: ['operator'] },
  occurredAt: new Date().toISOString(),
  schemaVersion: 1,
  commandId,
});

/**
 * A realistic small event: a node report's delta. Its id is made the way production makes it
 * (a UUIDv7 command id per command, eventIdFor(commandId, index)), or a random UUID (the old way,
 * kept as an informational figure).
 */
const event = (
  i: number,
  scheme: IdScheme = 'production',
  commandId = uuidV7(),
  index = 0,
): NewEvent => ({
  eventId: scheme === 'production' ? eventIdFor(commandId, index) : randomUUID(),
  type: TYPES[i % TYPES.length],
  data: { nodeId: `n-${i % 997}`, gpus: 8, model: 'H100', cpuMillis: 192000, ready: i % 2 === 0 },
  metadata: metadata(commandId),
});

/** One command's worth of events: 100 events sharing a command id, as one append. */
const batchOf = (b: number): NewEvent[] => {
  const commandId = uuidV7();
  return Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i, 'production', commandId, i));
};

const rate = (events: number, ms: number): number => Math.round((events / ms) * 1000);

const openRaw = (file: string): Database.Database => {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  for (const pragma of SQLITE_TUNING) db.pragma(pragma);
  db.exec(EVENTS_SCHEMA);
  return db;
};

/** Ceiling: the same rows (serialized the same way) inserted 100 per transaction, no port. */
const rawInsert = (dir: string, run: number): number => {
  const db = openRaw(path.join(dir, `raw-${run}.db`));
  const insert = db.prepare(
    'INSERT INTO events (event_id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const writeBatch = db.transaction((stream: string, events: readonly NewEvent[]) => {
    for (let r = 0; r < events.length; r++) {
      const e = events[r];
      insert.run(e.eventId, stream, r, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
    }
  });
  const batches = Array.from({ length: WRITE_EVENTS / BATCH }, (_, b) => batchOf(b));
  const t0 = performance.now();
  batches.forEach((events, b) => writeBatch(`node-${b}`, events));
  const ms = performance.now() - t0;
  db.close();
  return rate(WRITE_EVENTS, ms);
};

/** The port: one append of 100 events per stream, awaited one after the other. */
const portBatches = async (dir: string, run: number): Promise<number> => {
  const store = new SqliteEventStore({ file: path.join(dir, `port-${run}.db`) });
  const batches = Array.from({ length: WRITE_EVENTS / BATCH }, (_, b) => batchOf(b));
  const t0 = performance.now();
  for (let b = 0; b < batches.length; b++) await store.append(`node-${b}`, batches[b], 'no_stream');
  const ms = performance.now() - t0;
  await store.close();
  return rate(WRITE_EVENTS, ms);
};

/** 100 callers, each appending one event at a time to its own stream: group commit at work. */
const portConcurrent = async (
  dir: string,
  scheme: IdScheme,
  run: number,
): Promise<{ rate: number; perFlush: number }> => {
  const store = new SqliteEventStore({ file: path.join(dir, `concurrent-${scheme}-${run}.db`) });
  let written = 0;
  const deadline = performance.now() + CONCURRENT_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      let revision: number | 'no_stream' = 'no_stream';
      while (performance.now() < deadline) {
        revision = (await store.append(`session-${c}`, [event(written, scheme)], revision))
          .revision;
        written++;
      }
    }),
  );
  const ms = performance.now() - t0;
  const { flushes } = store.stats;
  await store.close();
  return { rate: rate(written, ms), perFlush: Math.round(written / flushes) };
};

/** Fills the port's own file fast through the raw path (1,000 streams, 10,000 rows a transaction). */
const fillReplayLog = (file: string): void => {
  new SqliteEventStore({ file }).close();
  const db = openRaw(file);
  const insert = db.prepare(
    'INSERT INTO events (event_id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const revisions = new Array<number>(1000).fill(0);
  const chunk = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const e = event(i);
      const s = i % 1000;
      insert.run(
        e.eventId,
        `node-${s}`,
        revisions[s]++,
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata),
      );
    }
  });
  for (let i = 0; i < REPLAY_EVENTS; i += 10_000) chunk(i, Math.min(REPLAY_EVENTS, i + 10_000));
  db.close();
};

/** Ceiling: iterate every row and JSON.parse data and metadata, folding the same projection. */
const rawReplay = (file: string): number => {
  const db = new Database(file, { readonly: true });
  const rows = db
    .prepare<[], [number, string, string, number, string, string, string]>(
      'SELECT position, event_id, stream_id, revision, type, data, metadata FROM events ORDER BY position',
    )
    .raw();
  const counts = new Map<string, number>();
  let n = 0;
  const t0 = performance.now();
  for (const row of rows.iterate()) {
    JSON.parse(row[5]);
    const meta = JSON.parse(row[6]) as EventMetadata;
    if (meta.schemaVersion !== 1) throw new Error('bad row');
    counts.set(row[4], (counts.get(row[4]) ?? 0) + 1);
    n++;
  }
  const ms = performance.now() - t0;
  db.close();
  if (n !== REPLAY_EVENTS) throw new Error(`raw replay read ${n} events`);
  return rate(n, ms);
};

/** The port: readAll in pages of 10,000, folding each event into a count per type. */
const portReplay = async (file: string): Promise<number> => {
  const store = new SqliteEventStore({ file });
  const counts = new Map<string, number>();
  let n = 0;
  let after = LOG_START;
  const t0 = performance.now();
  while (true) {
    const page = await store.readAll({ after, limit: REPLAY_PAGE });
    if (page.length === 0) break;
    for (const e of page) {
      if (e.metadata.schemaVersion !== 1) throw new Error('bad event');
      counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    }
    n += page.length;
    after = page[page.length - 1].position;
  }
  const ms = performance.now() - t0;
  await store.close();
  if (n !== REPLAY_EVENTS) throw new Error(`port replay read ${n} events`);
  return rate(n, ms);
};

const percentOf = (value: number, ceiling: number): number => value / ceiling;

const run = async (): Promise<Figure[]> => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eventstore-bench-'));
  try {
    let runNo = 0;
    // Alternated, so drifting load on a shared box hits the ceiling and the port alike.
    const raws: number[] = [];
    const ports: number[] = [];
    for (let r = 0; r < 3; r++) {
      raws.push(rawInsert(dir, runNo++));
      ports.push(await portBatches(dir, runNo++));
    }
    const rawWrite = median(raws);
    const portWrite = median(ports);
    const concurrentRuns = [0, 1, 2].map(() => ({ rate: 0, perFlush: 0 }));
    for (let r = 0; r < 3; r++) concurrentRuns[r] = await portConcurrent(dir, 'production', r);
    const concurrent = {
      rate: median(concurrentRuns.map((c) => c.rate)),
      perFlush: median(concurrentRuns.map((c) => c.perFlush)),
    };
    const randomIds = await medianOf(
      3,
      async () => (await portConcurrent(dir, 'random', runNo++)).rate,
    );

    const replayFile = path.join(dir, 'replay.db');
    fillReplayLog(replayFile);
    const rawRead = await medianOf(3, async () => rawReplay(replayFile));
    const portRead = await medianOf(3, () => portReplay(replayFile));

    // PostgreSQL's figures beside its own raw ceilings, in a database of its own.
    const postgres = await postgresEventStoreFigures();

    return [
      {
        name: 'eventstore.sqlite.append_batches_of_100',
        value: portWrite,
        unit: 'events/s',
        ceiling: { name: 'better-sqlite3 insert, 100 rows per transaction', value: rawWrite },
        target: '>= 60 % of ceiling',
        met: percentOf(portWrite, rawWrite) >= 0.6,
      },
      {
        name: `eventstore.sqlite.concurrent_single_appends_${CALLERS}_callers`,
        value: concurrent.rate,
        unit: 'events/s',
        target: `>= 20,000 events/s (group commit: ${concurrent.perFlush} events per transaction)`,
        met: concurrent.rate >= 20_000,
      },
      {
        name: `eventstore.sqlite.concurrent_single_appends_${CALLERS}_callers_random_uuid_ids`,
        value: randomIds,
        unit: 'events/s',
        target: 'informational: the same figure with random UUIDv4 event ids (before UUIDv7)',
      },
      {
        name: 'eventstore.sqlite.replay_readAll_1M',
        value: portRead,
        unit: 'events/s',
        ceiling: {
          name: 'better-sqlite3 iterate + JSON.parse of data and metadata',
          value: rawRead,
        },
        target: '>= 50 % of ceiling',
        met: percentOf(portRead, rawRead) >= 0.5,
      },
      ...postgres,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/**
 * Event store throughput: the SQLite file in WAL mode with synchronous=FULL on both sides, then
 * PostgreSQL with synchronous_commit on (bench/eventstore-postgres.ts).
 */
export const eventStoreBench: BenchSuite = { name: 'eventstore', run };

if (require.main === module) {
  const t0 = performance.now();
  run()
    .then((figures) =>
      console.log(
        JSON.stringify(
          { machine: machine(), seconds: Math.round((performance.now() - t0) / 1000), figures },
          null,
          2,
        ),
      ),
    )
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
