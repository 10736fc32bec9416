import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type Redis from 'ioredis';
import { RequestPathRedis, unavailableAs } from '../runtime/redis-unavailable';

/** A successful response kept for replays of the same Idempotency-Key. */
export type StoredResponse = {
  readonly bodyHash: string;
  /** The status the first response had (absent in records written before it was kept: 200). */
  readonly status?: number;
  readonly body: unknown;
  readonly at: number;
};

export interface IdempotencyStore {
  get(scope: string): Promise<StoredResponse | null>;
  put(scope: string, response: StoredResponse): Promise<void>;
  close(): Promise<void>;
}

/** Keys are kept a day, as payment APIs do: long enough for any client's retries. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly db: Database.Database;
  private readonly select: Database.Statement<
    [string, number],
    { body_hash: string; status: number | null; body: string; at: number }
  >;
  private readonly insert: Database.Statement<[string, string, number, string, number]>;
  private readonly purge: Database.Statement<[number]>;

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS idempotency (scope TEXT PRIMARY KEY, body_hash TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL, status INTEGER)',
    );
    // Files made before the status was kept gain the column; their rows replay as 200.
    const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(idempotency)').all();
    if (!columns.some((c) => c.name === 'status')) {
      this.db.exec('ALTER TABLE idempotency ADD COLUMN status INTEGER');
    }
    this.select = this.db.prepare(
      'SELECT body_hash, status, body, at FROM idempotency WHERE scope = ? AND at > ?',
    );
    this.insert = this.db.prepare(
      'INSERT INTO idempotency (scope, body_hash, status, body, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(scope) DO NOTHING',
    );
    this.purge = this.db.prepare('DELETE FROM idempotency WHERE at <= ?');
    this.purge.run(Date.now() - IDEMPOTENCY_TTL_MS);
  }

  async get(scope: string): Promise<StoredResponse | null> {
    const row = this.select.get(scope, Date.now() - IDEMPOTENCY_TTL_MS);
    if (!row) return null;
    const body: unknown = JSON.parse(row.body);
    return row.status === null
      ? { bodyHash: row.body_hash, body, at: row.at }
      : { bodyHash: row.body_hash, status: row.status, body, at: row.at };
  }

  async put(scope: string, response: StoredResponse): Promise<void> {
    this.insert.run(
      scope,
      response.bodyHash,
      response.status ?? 200,
      JSON.stringify(response.body ?? null),
      response.at,
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly link: RequestPathRedis;
  private readonly redis: Redis;
  private readonly unavailable = unavailableAs('idempotency store (Redis)');

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.link = new RequestPathRedis(url, 'idempotency', 'idempotency store (Redis)');
    this.redis = this.link.client;
  }

  async get(scope: string): Promise<StoredResponse | null> {
    await this.link.connected();
    const raw = await this.redis.get(`${this.prefix}:idem:${scope}`).catch(this.unavailable);
    return raw ? (JSON.parse(raw) as StoredResponse) : null;
  }

  async put(scope: string, response: StoredResponse): Promise<void> {
    // NX: the first stored response is the one every replay gets.
    await this.link.connected();
    await this.redis
      .set(`${this.prefix}:idem:${scope}`, JSON.stringify(response), 'PX', IDEMPOTENCY_TTL_MS, 'NX')
      .catch(this.unavailable);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
