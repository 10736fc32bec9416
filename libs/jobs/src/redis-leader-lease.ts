import IORedis from 'ioredis';
import { consoleFailureSink, FailureSink, ThrottledLog } from '@fleet/kernel/throttled-log';
import { AcquireResult, LeaseStore, leaseTiming, LeaseTiming } from './leader-lease';
import { LeaseLoop } from './lease-loop';

/**
 * The lease is one key holding `<token>:<epoch>` with a TTL; the epoch counter is another key,
 * without one. Each script runs atomically in Redis.
 */
const SCRIPTS = {
  // KEYS: lease, counter. ARGV: token, ttl ms, floor. Our own token: an earlier try's answer
  // was lost; else SET NX PX with the counter's next value (above the floor) as the epoch.
  fleetLeaseAcquire: `
local holder = redis.call('GET', KEYS[1])
if holder then
  local sep = string.find(holder, ':', 1, true)
  local epoch = tonumber(string.sub(holder, sep + 1))
  if string.sub(holder, 1, sep - 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, epoch}
  end
  return {0, epoch, redis.call('PTTL', KEYS[1])}
end
local epoch = redis.call('INCR', KEYS[2])
local floor = tonumber(ARGV[3])
if epoch <= floor then
  epoch = floor + 1
  redis.call('SET', KEYS[2], epoch)
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. epoch, 'NX', 'PX', ARGV[2])
return {1, epoch}`,
  // KEYS: lease. ARGV: token, ttl ms. Compare, then PEXPIRE.
  fleetLeaseRenew: `
local holder = redis.call('GET', KEYS[1])
if holder and string.sub(holder, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`,
  // KEYS: lease. ARGV: token. Compare, then DEL.
  fleetLeaseResign: `
local holder = redis.call('GET', KEYS[1])
if holder and string.sub(holder, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then
  return redis.call('DEL', KEYS[1])
end
return 0`,
} as const;

type LeaseClient = IORedis & {
  fleetLeaseAcquire(...args: Array<string | number>): Promise<number[]>;
  fleetLeaseRenew(...args: Array<string | number>): Promise<number>;
  fleetLeaseResign(...args: Array<string | number>): Promise<number>;
};

export type RedisLeaseStoreOptions = {
  readonly redisUrl: string;
  /** Key prefix, as every key of the app (default `fleet`). */
  readonly prefix?: string;
  readonly log?: FailureSink;
};

/**
 * The lease in Redis, on a connection of its own that queues nothing: a command sent while
 * Redis is out of reach fails at once rather than landing late (a take or renewal that lands
 * late would hold a lease its sender no longer counts on).
 */
export class RedisLeaseStore implements LeaseStore {
  readonly key: string;
  readonly counterKey: string;
  private client: LeaseClient | null = null;
  private ready: Promise<void> | null = null;
  private readonly errors: ThrottledLog;

  constructor(private readonly options: RedisLeaseStoreOptions) {
    this.key = `${options.prefix ?? 'fleet'}:leader-lease`;
    this.counterKey = `${this.key}:epoch`;
    this.errors = new ThrottledLog(options.log ?? consoleFailureSink);
  }

  async acquire(token: string, ttlMs: number, floor: number): Promise<AcquireResult> {
    const client = await this.connected();
    const [acquired, epoch, remainingMs] = await client.fleetLeaseAcquire(
      this.key,
      this.counterKey,
      token,
      ttlMs,
      floor,
    );
    return acquired === 1
      ? { acquired: true, epoch }
      : { acquired: false, epoch, remainingMs: remainingMs ?? 0 };
  }

  async renew(token: string, ttlMs: number): Promise<boolean> {
    const client = await this.connected();
    return (await client.fleetLeaseRenew(this.key, token, ttlMs)) === 1;
  }

  async resign(token: string): Promise<void> {
    const client = await this.connected();
    await client.fleetLeaseResign(this.key, token);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    await client.quit().catch(() => client.disconnect());
  }

  /** The client, once its connection is up (callers bound the wait). */
  private connected(): Promise<LeaseClient> {
    const client = (this.client ??= this.connect());
    if (client.status === 'ready') return Promise.resolve(client);
    this.ready ??= new Promise<void>((resolve) =>
      client.once('ready', () => {
        this.ready = null;
        resolve();
      }),
    );
    return this.ready.then(() => client);
  }

  private connect(): LeaseClient {
    const client = new IORedis(this.options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // Back within a second of Redis, so a new term can start that soon.
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      client.defineCommand(name, { numberOfKeys: name === 'fleetLeaseAcquire' ? 2 : 1, lua });
    }
    client.on('error', (error) => this.errors.failure('leader lease: redis connection', error));
    client.on('ready', () => this.errors.clear());
    return client as LeaseClient;
  }
}

export type RedisLeaderLeaseOptions = RedisLeaseStoreOptions & {
  /** LEADER_LEASE_SEC in ms, or a whole timing (specs). */
  readonly lease: number | LeaseTiming;
};

/** The lease for replicas sharing Redis: one of them leads at a time. */
export class RedisLeaderLease extends LeaseLoop {
  constructor(options: RedisLeaderLeaseOptions) {
    const { lease, log } = options;
    super(new RedisLeaseStore(options), typeof lease === 'number' ? leaseTiming(lease) : lease, {
      log,
    });
  }
}
