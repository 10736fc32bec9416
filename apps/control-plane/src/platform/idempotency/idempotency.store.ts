import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type Redis from 'ioredis';
import { RequestPathRedis, unavailableAs } from '../runtime/redis-unavailable';
import { TurnPipeline } from './turn-pipeline';

/** A successful response kept for replays of the same Idempotency-Key. */
export type StoredResponse = {
  readonly bodyHash: string;
  /** The status the first response had (absent in records written before it was kept: 200). */
  readonly status?: number;
  readonly body: unknown;
  readonly at: number;
};

/** A key's first use: the body it came with, and when (its command id's day and its 24 h). */
export type KeyClaim = { readonly bodyHash: string; readonly at: number };

export interface IdempotencyStore {
  get(scope: string): Promise<StoredResponse | null>;
  put(scope: string, response: StoredResponse): Promise<void>;
  /**
   * Records `claim` as the key's first use unless one is kept (for 24 h from its `at`), and
   * returns the one that stands and whether it is this one. It outlives a lost answer: a
   * retry finds the first use.
   */
  claim(scope: string, claim: KeyClaim): Promise<{ standing: KeyClaim; created: boolean }>;
  /** Forgets `claim` if it is still the key's first use (its request was refused). */
  unclaim(scope: string, claim: KeyClaim): Promise<void>;
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
  private readonly insertClaim: Database.Statement<[string, string, number, number]>;
  private readonly selectClaim: Database.Statement<[string], { body_hash: string; at: number }>;
  private readonly deleteClaim: Database.Statement<[string, string, number]>;
  private readonly purgeClaims: Database.Statement<[number]>;

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
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
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS idempotency_claims (scope TEXT PRIMARY KEY, body_hash TEXT NOT NULL, at INTEGER NOT NULL)',
    );
    // A claim is replaced only once it has expired (the first use stands for 24 h).
    this.insertClaim = this.db.prepare(
      'INSERT INTO idempotency_claims (scope, body_hash, at) VALUES (?, ?, ?) ON CONFLICT(scope) DO UPDATE SET body_hash = excluded.body_hash, at = excluded.at WHERE idempotency_claims.at <= ?',
    );
    this.selectClaim = this.db.prepare(
      'SELECT body_hash, at FROM idempotency_claims WHERE scope = ?',
    );
    this.deleteClaim = this.db.prepare(
      'DELETE FROM idempotency_claims WHERE scope = ? AND body_hash = ? AND at = ?',
    );
    this.purgeClaims = this.db.prepare('DELETE FROM idempotency_claims WHERE at <= ?');
    this.purgeClaims.run(Date.now() - IDEMPOTENCY_TTL_MS);
  }

  async claim(scope: string, claim: KeyClaim): Promise<{ standing: KeyClaim; created: boolean }> {
    const { changes } = this.insertClaim.run(
      scope,
      claim.bodyHash,
      claim.at,
      claim.at - IDEMPOTENCY_TTL_MS,
    );
    if (changes > 0) return { standing: claim, created: true };
    const row = this.selectClaim.get(scope);
    return { standing: row ? { bodyHash: row.body_hash, at: row.at } : claim, created: !row };
  }

  async unclaim(scope: string, claim: KeyClaim): Promise<void> {
    this.deleteClaim.run(scope, claim.bodyHash, claim.at);
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

/**
 * Keys in Redis, each command of a request sent with the turn's other requests' in one
 * pipeline (TurnPipeline): a burst of keyed requests is one round trip a step, not one each.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly link: RequestPathRedis;
  private readonly redis: Redis;
  private readonly turn: TurnPipeline;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.link = new RequestPathRedis(url, 'idempotency', 'idempotency store (Redis)');
    this.redis = this.link.client;
    const unavailable = unavailableAs('idempotency store (Redis)');
    this.turn = new TurnPipeline(this.link, unavailable);
  }

  /** Batches sent (pipelines), for tests. */
  get batches(): number {
    return this.turn.batches;
  }

  async get(scope: string): Promise<StoredResponse | null> {
    await this.link.connected();
    const raw = await this.turn.send<string | null>('get', `${this.prefix}:idem:${scope}`);
    return raw ? (JSON.parse(raw) as StoredResponse) : null;
  }

  async put(scope: string, response: StoredResponse): Promise<void> {
    // NX: the first stored response is the one every replay gets.
    await this.link.connected();
    await this.turn.send(
      'set',
      `${this.prefix}:idem:${scope}`,
      JSON.stringify(response),
      'PX',
      IDEMPOTENCY_TTL_MS,
      'NX',
    );
  }

  async claim(scope: string, claim: KeyClaim): Promise<{ standing: KeyClaim; created: boolean }> {
    await this.link.connected();
    const key = this.claimKey(scope);
    // NX with PX: the first use stands until it expires, 24 h after it was made. The GET goes
    // in the same batch: what stands is known in one round trip, claimed or not.
    const [set, raw] = await Promise.all([
      this.turn.send<string | null>(
        'set',
        key,
        JSON.stringify(claim),
        'PX',
        IDEMPOTENCY_TTL_MS,
        'NX',
      ),
      this.turn.send<string | null>('get', key),
    ]);
    if (set === 'OK') return { standing: claim, created: true };
    // Expired or released between the two commands: this use is the first now.
    if (!raw) return this.claim(scope, claim);
    const standing = JSON.parse(raw) as KeyClaim;
    if (standing.at > claim.at - IDEMPOTENCY_TTL_MS) return { standing, created: false };
    // Over 24 h old by the caller's clock (as the SQLite store judges it): this use is the first.
    await this.turn.send('set', key, JSON.stringify(claim), 'PX', IDEMPOTENCY_TTL_MS);
    return { standing: claim, created: true };
  }

  async unclaim(scope: string, claim: KeyClaim): Promise<void> {
    await this.link.connected();
    // Compare and delete in one step: a claim made since by another request stays.
    await this.turn.send(
      'eval',
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
      1,
      this.claimKey(scope),
      JSON.stringify(claim),
    );
  }

  private claimKey(scope: string): string {
    return `${this.prefix}:idem-claim:${scope}`;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
