import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { EventMetadata, eventIdFor, uuidV7 } from '@fleet/kernel';
import { LOG_START, NewEvent } from '@fleet/eventstore/port';
import { PostgresEventStore } from '@fleet/eventstore/postgres-event-store';
import { Figure, median } from './lib';

/**
 * The PostgreSQL event store beside raw node-postgres doing the same work, in a database of its
 * own on BENCH_POSTGRES_URL's server (default: the machine's, as the specs use). The server's
 * synchronous_commit stays on: every acknowledged append has been flushed to its WAL.
 * BENCH_EVENTSTORE_SCALE (default 1) shrinks the sizes for a quick look while developing.
 */
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCALE = Number(process.env.BENCH_EVENTSTORE_SCALE ?? 1);

const BATCH = 100;
const WRITE_EVENTS = Math.max(BATCH, Math.round((20_000 * SCALE) / BATCH) * BATCH);
const CALLERS = 100;
const CONCURRENT_MS = Math.max(500, Math.round(3_000 * SCALE));
const REPLAY_EVENTS = Math.max(10_000, Math.round(200_000 * SCALE));
const REPLAY_PAGE = 10_000;
const TYPES = Array.from({ length: 10 }, (_, i) => `NodeThingHappened${i}.v1`);

const metadata = (commandId: string): EventMetadata => ({
  correlationId: commandId,
  causationId: commandId,
  actor: { sub: 'operator-1', roles: ['operator'] },
  occurredAt: new Date().toISOString(),
  schemaVersion: 1,
  commandId,
});

/** The same small event as the SQLite figures: a node report's delta, with a production id. */
const event = (i: number, commandId = uuidV7(), index = 0): NewEvent => ({
  eventId: eventIdFor(commandId, index),
  type: TYPES[i % TYPES.length],
  data: { nodeId: `n-${i % 997}`, gpus: 8, model: 'H100', cpuMillis: 192000, ready: i % 2 === 0 },
  metadata: metadata(commandId),
});

const batchOf = (b: number): NewEvent[] => {
  const commandId = uuidV7();
  return Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i, commandId, i));
};

const rate = (events: number, ms: number): number => Math.round((events / ms) * 1000);

/** The port's table without the port: same columns, keys and index, no triggers, no lock. */
const RAW_SCHEMA = `
CREATE TABLE raw_events (
  position   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id   TEXT   NOT NULL UNIQUE,
  stream_id  TEXT   NOT NULL,
  revision   BIGINT NOT NULL,
  type       TEXT   NOT NULL,
  data       JSON   NOT NULL,
  metadata   JSON   NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX raw_events_type_position ON raw_events (type, position);`;

const rowValues = (stream: string, revision: number, e: NewEvent): unknown[] => [
  e.eventId,
  stream,
  revision,
  e.type,
  JSON.stringify(e.data),
  JSON.stringify(e.metadata),
];

const MULTI_ROW_INSERT = `INSERT INTO raw_events (event_id, stream_id, revision, type, data, metadata) VALUES ${Array.from(
  { length: BATCH },
  (_, r) => `(${Array.from({ length: 6 }, (_, c) => `$${r * 6 + c + 1}`).join(', ')})`,
).join(', ')}`;

/** Ceiling: one multi-row INSERT of 100 rows per statement (its own transaction), awaited in turn. */
const rawBatches = async (pool: Pool, run: number): Promise<number> => {
  const batches = Array.from({ length: WRITE_EVENTS / BATCH }, (_, b) => batchOf(b));
  const t0 = performance.now();
  for (let b = 0; b < batches.length; b++) {
    await pool.query({
      name: 'raw_multi_row',
      text: MULTI_ROW_INSERT,
      values: batches[b].flatMap((e, r) => rowValues(`raw-${run}-node-${b}`, r, e)),
    });
  }
  return rate(WRITE_EVENTS, performance.now() - t0);
};

/** The port: one append of 100 events per stream, awaited one after the other. */
const portBatches = async (url: string, run: number): Promise<number> => {
  const store = new PostgresEventStore({ url });
  await store.ping();
  const batches = Array.from({ length: WRITE_EVENTS / BATCH }, (_, b) => batchOf(b));
  const t0 = performance.now();
  for (let b = 0; b < batches.length; b++) {
    await store.append(`port-${run}-node-${b}`, batches[b], 'no_stream');
  }
  const ms = performance.now() - t0;
  await store.close();
  return rate(WRITE_EVENTS, ms);
};

/** Raw: each caller INSERTs one row per statement (autocommit) through a pool of 20 connections. */
const rawConcurrent = async (pool: Pool, run: number): Promise<number> => {
  let written = 0;
  const deadline = performance.now() + CONCURRENT_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      for (let revision = 0; performance.now() < deadline; revision++) {
        await pool.query({
          name: 'raw_single_row',
          text: 'INSERT INTO raw_events (event_id, stream_id, revision, type, data, metadata) VALUES ($1, $2, $3, $4, $5, $6)',
          values: rowValues(`raw-${run}-session-${c}`, revision, event(written)),
        });
        written++;
      }
    }),
  );
  return rate(written, performance.now() - t0);
};

/** The port: 100 callers, each appending one event at a time to its own stream. */
const portConcurrent = async (
  url: string,
  run: number,
): Promise<{ rate: number; perFlush: number }> => {
  const store = new PostgresEventStore({ url });
  await store.ping();
  let written = 0;
  const deadline = performance.now() + CONCURRENT_MS;
  const t0 = performance.now();
  const before = store.stats.flushes;
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      let revision: number | 'no_stream' = 'no_stream';
      while (performance.now() < deadline) {
        revision = (await store.append(`port-${run}-session-${c}`, [event(written)], revision))
          .revision;
        written++;
      }
    }),
  );
  const ms = performance.now() - t0;
  const flushes = store.stats.flushes - before;
  await store.close();
  return { rate: rate(written, ms), perFlush: Math.round(written / flushes) };
};

/** Adds REPLAY_EVENTS to the port's own table by plain INSERTs (1,000 streams, 10,000 rows a statement). */
const fillReplayLog = async (pool: Pool): Promise<void> => {
  const revisions = new Array<number>(1000).fill(0);
  for (let from = 0; from < REPLAY_EVENTS; from += 10_000) {
    const columns: [string[], string[], number[], string[], string[], string[]] = [
      [],
      [],
      [],
      [],
      [],
      [],
    ];
    for (let i = from; i < Math.min(REPLAY_EVENTS, from + 10_000); i++) {
      const s = i % 1000;
      const row = rowValues(`replay-node-${s}`, revisions[s]++, event(i));
      row.forEach((v, c) => (columns[c] as unknown[]).push(v));
    }
    await pool.query(
      `INSERT INTO events (event_id, stream_id, revision, type, data, metadata)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::json[], $6::json[])`,
      columns,
    );
  }
};

type Fold = { counts: Map<string, number>; n: number };
const fold = (acc: Fold, type: string, meta: EventMetadata): void => {
  if (meta.schemaVersion !== 1) throw new Error('bad event');
  acc.counts.set(type, (acc.counts.get(type) ?? 0) + 1);
  acc.n++;
};

/** Ceiling: one SELECT of every row in position order (the client parses the JSON), folded alike. */
const rawReplay = async (url: string, expected: number): Promise<number> => {
  const client = new Client({ connectionString: url });
  await client.connect();
  const acc: Fold = { counts: new Map(), n: 0 };
  const t0 = performance.now();
  const { rows } = await client.query<
    [string, string, string, string, string, unknown, EventMetadata]
  >({
    text: 'SELECT position, event_id, stream_id, revision, type, data, metadata FROM events ORDER BY position',
    rowMode: 'array',
  });
  for (const row of rows) fold(acc, row[4], row[6]);
  const ms = performance.now() - t0;
  await client.end();
  if (acc.n !== expected) throw new Error(`raw replay read ${acc.n} of ${expected} events`);
  return rate(acc.n, ms);
};

/** The port: readAll in pages of 10,000, folding each event the same way. */
const portReplay = async (url: string, expected: number): Promise<number> => {
  const store = new PostgresEventStore({ url });
  await store.ping();
  const acc: Fold = { counts: new Map(), n: 0 };
  let after = LOG_START;
  const t0 = performance.now();
  for (;;) {
    const page = await store.readAll({ after, limit: REPLAY_PAGE });
    if (page.length === 0) break;
    for (const e of page) fold(acc, e.type, e.metadata);
    after = page[page.length - 1].position;
  }
  const ms = performance.now() - t0;
  await store.close();
  if (acc.n !== expected) throw new Error(`port replay read ${acc.n} of ${expected} events`);
  return rate(acc.n, ms);
};

const adminQuery = async (sql: string): Promise<void> => {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

/** Alternates ceiling and port `runs` times (drifting load on a shared box hits both alike). */
const alternate = async (
  runs: number,
  raw: (run: number) => Promise<number>,
  port: (run: number) => Promise<number>,
): Promise<{ raw: number; port: number }> => {
  const raws: number[] = [];
  const ports: number[] = [];
  for (let r = 0; r < runs; r++) {
    raws.push(await raw(r));
    ports.push(await port(r));
  }
  return { raw: median(raws), port: median(ports) };
};

export const postgresEventStoreFigures = async (): Promise<Figure[]> => {
  const name = `es_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const target = new URL(ADMIN_URL);
  target.pathname = `/${name}`;
  const url = target.toString();
  const pool = new Pool({ connectionString: url, max: 20 });
  pool.on('error', () => undefined);
  try {
    await pool.query(RAW_SCHEMA);
    const { rows } = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    const durable = rows[0].synchronous_commit;
    if (durable !== 'on')
      throw new Error(`synchronous_commit is ${durable}: the figures would not be durable`);

    const batches = await alternate(
      3,
      (r) => rawBatches(pool, r),
      (r) => portBatches(url, r),
    );
    const perFlush: number[] = [];
    const concurrent = await alternate(
      3,
      (r) => rawConcurrent(pool, r),
      async (r) => {
        const result = await portConcurrent(url, r);
        perFlush.push(result.perFlush);
        return result.rate;
      },
    );

    // The log holds the port's writes above as well: both sides read all of it.
    await fillReplayLog(pool);
    const logged = Number(
      (await pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0].n,
    );
    const replay = await alternate(
      3,
      () => rawReplay(url, logged),
      () => portReplay(url, logged),
    );

    const k = (n: number): string => `${Math.round(n / 1000)}k`;
    return [
      {
        name: 'eventstore.postgres.append_batches_of_100',
        value: batches.port,
        unit: 'events/s',
        ceiling: { name: 'pg multi-row INSERT, 100 rows per statement', value: batches.raw },
        target: '>= 50 % of ceiling',
        met: batches.port / batches.raw >= 0.5,
      },
      {
        name: `eventstore.postgres.concurrent_single_appends_${CALLERS}_callers`,
        value: concurrent.port,
        unit: 'events/s',
        ceiling: {
          name: `pg one INSERT per event, ${CALLERS} callers on 20 connections (no ceiling: the port batches)`,
          value: concurrent.raw,
        },
        target: `>= 10,000 events/s durable (group commit: ${median(perFlush)} events per transaction)`,
        met: concurrent.port >= 10_000,
      },
      {
        name: `eventstore.postgres.replay_readAll_${k(logged)}`,
        value: replay.port,
        unit: 'events/s',
        ceiling: {
          name: 'pg one SELECT of every row, JSON parsed by the client',
          value: replay.raw,
        },
        target: '>= 50 % of ceiling',
        met: replay.port / replay.raw >= 0.5,
      },
    ];
  } finally {
    await pool.end();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
};

if (require.main === module) {
  postgresEventStoreFigures()
    .then((figures) => console.log(JSON.stringify(figures, null, 2)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
