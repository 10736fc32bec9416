import fs from 'node:fs';
import path from 'node:path';
import {
  KURRENTDB_SCHEMES,
  kurrentDbConnectionProblem,
} from '@fleet/eventstore/kurrentdb-connection';
import { POSTGRES_SCHEMES, postgresConnectionProblem } from '@fleet/eventstore/postgres-connection';
import { GPU_MODELS, GpuModel } from '../catalog/catalog';
import { MIN_JWT_SECRET_LENGTH } from './jwt-secret-rule';

export type RateCard = {
  readonly currency: string;
  /** Minor units per card-hour, by model. */
  readonly gpuPerHour: Readonly<Record<GpuModel, number>>;
  /** Minor units per vCPU-hour. */
  readonly cpuPerVcpuHour: number;
};

export type Config = {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly nodeStaleSec: number;
  readonly eventstoreUrl?: string;
  readonly mongoUrl?: string;
  readonly redisUrl?: string;
  readonly authJwtSecret?: string;
  readonly rateCard: RateCard;
  readonly notifyWebhookUrl?: string;
  readonly provisionerUrl?: string;
  /** Seconds a long operation (scale, delete a pool) may run before it ends as `timeout`. */
  readonly operationDeadlineSec: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Seconds an unobserved cordon may wait before `cordon_sync_overdue`. */
  readonly cordonSyncSec: number;
  /** Share of a cluster's online nodes going stale together that means "our ingest, not the nodes". */
  readonly massFailureRatio: number;
  readonly massFailureMinNodes: number;
  /** Relocations one drain runs at once. */
  readonly drainParallelism: number;
  /** Prefix for every Redis key this process writes (isolates tests and tenants of one Redis). */
  readonly redisPrefix: string;
  /** Body limit in bytes; larger bodies get 413 payload_too_large. */
  readonly bodyLimitBytes: number;
  /**
   * How far V8 lets the heap grow past what survived the last full GC, in percent (V8's
   * `--heap-growing-percent`); 0 keeps V8's own factor (up to 4x the live heap;
   * docs/PERFORMANCE.md).
   */
  readonly heapGrowthPercent: number;
  /** How often running drains and operations whose jobs are gone (Redis lost them) are re-armed. */
  readonly jobsRepairSec: number;
  /** How long the start waits for its network stores to answer before it gives up, naming them. */
  readonly startTimeoutSec: number;
  /**
   * Seconds the leader's lease lasts unrenewed (with REDIS_URL): replicas' periodic work runs in
   * the leader only, and a leader that dies is replaced within this.
   */
  readonly leaderLeaseSec: number;
  /** Where backups go (`s3://bucket/path`, …), each tenant under its own prefix. */
  readonly backupBucket: string;
  /** A Velero controller's HTTP API; unset: backups are simulated in process. */
  readonly veleroUrl?: string;
};

export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`invalid configuration: ${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_RATE_CARD: RateCard = {
  currency: 'KRW',
  gpuPerHour: { L40S: 3600, HPC_GPU: 7200, MIG_1g: 600, MIG_2g: 1200, MIG_3g: 1800 },
  cpuPerVcpuHour: 36,
};

type Env = Readonly<Record<string, string | undefined>>;

const present = (env: Env, key: string): string | undefined => {
  const value = env[key];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
};

const integer = (env: Env, key: string, fallback: number, min: number, max: number): number => {
  const raw = present(env, key);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(key, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(key, `expected ${min} to ${max}, got ${value}`);
  }
  return value;
};

const ratio = (env: Env, key: string, fallback: number): number => {
  const raw = present(env, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) {
    throw new ConfigError(key, `expected a number in (0, 1], got "${raw}"`);
  }
  return value;
};

/** An object-store location: `<scheme>://<bucket>[/<path>]`, no credentials, no query. */
const bucket = (env: Env, key: string, fallback: string): string => {
  const raw = present(env, key) ?? fallback;
  const match =
    /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/[A-Za-z0-9._/-]*)?$/.exec(raw);
  if (!match) {
    throw new ConfigError(
      key,
      'expected <scheme>://<bucket>[/<path>], e.g. s3://fleet-backups/prod',
    );
  }
  return raw.replace(/\/+$/, '');
};

const url = (env: Env, key: string, protocols: readonly string[]): string | undefined => {
  const raw = present(env, key);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(key, 'not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(key, `expected a ${protocols.join(' or ')} URL`);
  }
  // fetch refuses a URL with credentials in it, at every call: a webhook or provisioner
  // configured so would fail every delivery, and its error would carry the password along.
  if ((parsed.username !== '' || parsed.password !== '') && parsed.protocol.startsWith('http')) {
    throw new ConfigError(key, 'must not carry credentials (user:password@): they are never sent');
  }
  return raw;
};

/**
 * EVENTSTORE_URL's schemes, each with its store client's own check of the rest (why that
 * client cannot use the URL, or undefined). A connection string is no WHATWG URL: a cluster's
 * `kurrentdb://a:2113,b:2113,c:2113` has three hosts.
 */
const EVENT_STORE_SCHEMES: ReadonlyMap<string, (url: string) => string | undefined> = new Map([
  ...KURRENTDB_SCHEMES.map((scheme) => [scheme, kurrentDbConnectionProblem] as const),
  ...POSTGRES_SCHEMES.map((scheme) => [scheme, postgresConnectionProblem] as const),
]);

const eventStoreUrl = (env: Env): string | undefined => {
  const key = 'EVENTSTORE_URL';
  const raw = present(env, key);
  if (raw === undefined) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//.exec(raw)?.[1];
  const problemOf = scheme === undefined ? undefined : EVENT_STORE_SCHEMES.get(scheme);
  if (!problemOf) {
    const known = [...EVENT_STORE_SCHEMES.keys()].map((s) => `${s}//`).join(', ');
    throw new ConfigError(key, `expected a URL starting ${known}`);
  }
  const problem = problemOf(raw);
  if (problem !== undefined) throw new ConfigError(key, problem);
  return raw;
};

// Safe integers: a price past 2^53 is not the price written (9007199254740993 reads as …992).
const isMinorUnits = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

const RATE_CARD_KEYS = new Set(['currency', 'gpuPerHour', 'cpuPerVcpuHour']);

/** The secret signing every token: a short one can be guessed offline from any token. */
const jwtSecret = (env: Env): string | undefined => {
  const secret = present(env, 'AUTH_JWT_SECRET');
  if (secret !== undefined && secret.length < MIN_JWT_SECRET_LENGTH) {
    throw new ConfigError(
      'AUTH_JWT_SECRET',
      `must be at least ${MIN_JWT_SECRET_LENGTH} characters (got ${secret.length})`,
    );
  }
  return secret;
};

/** A directory, or a path where one can be made; a file there stops the start naming the setting. */
const directory = (env: Env, key: string, fallback: string): string => {
  const dir = path.resolve(present(env, key) ?? fallback);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir);
  } catch {
    return dir; // made at start
  }
  if (!stat.isDirectory()) throw new ConfigError(key, `${dir} exists and is not a directory`);
  return dir;
};

export const parseRateCard = (raw: string, baseDir = process.cwd()): RateCard => {
  let text = raw;
  if (!raw.trimStart().startsWith('{')) {
    const file = path.resolve(baseDir, raw);
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      throw new ConfigError('RATE_CARD', `neither JSON nor a readable file: ${file}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError('RATE_CARD', 'is not valid JSON');
  }
  const card = parsed as Partial<RateCard>;
  if (typeof card !== 'object' || card === null || Array.isArray(card)) {
    throw new ConfigError('RATE_CARD', 'expected a JSON object');
  }
  const unknown = Object.keys(card).filter((k) => !RATE_CARD_KEYS.has(k));
  if (unknown.length > 0) {
    throw new ConfigError('RATE_CARD', `unknown field ${unknown.join(', ')}`);
  }
  if (typeof card.currency !== 'string' || !/^[A-Z]{3}$/.test(card.currency)) {
    throw new ConfigError('RATE_CARD', 'currency must be a three-letter ISO code');
  }
  const gpu = card.gpuPerHour as Record<string, unknown> | undefined;
  if (typeof gpu !== 'object' || gpu === null) {
    throw new ConfigError('RATE_CARD', 'gpuPerHour must be an object of model → price');
  }
  for (const model of Object.keys(gpu)) {
    if (!(GPU_MODELS as readonly string[]).includes(model)) {
      throw new ConfigError('RATE_CARD', `gpuPerHour names unknown model ${model}`);
    }
  }
  for (const model of GPU_MODELS) {
    if (!isMinorUnits(gpu[model])) {
      throw new ConfigError('RATE_CARD', `gpuPerHour.${model} must be a whole number ≥ 0`);
    }
  }
  if (!isMinorUnits(card.cpuPerVcpuHour)) {
    throw new ConfigError('RATE_CARD', 'cpuPerVcpuHour must be a whole number ≥ 0');
  }
  return {
    currency: card.currency,
    gpuPerHour: gpu as Record<GpuModel, number>,
    cpuPerVcpuHour: card.cpuPerVcpuHour,
  };
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads and validates every setting; the first bad one throws a ConfigError that names it. */
export const loadConfig = (env: Env = process.env): Config => {
  const logLevel = present(env, 'LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  }
  const rawCard = present(env, 'RATE_CARD');
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: present(env, 'HOST') ?? '0.0.0.0',
    dataDir: directory(env, 'DATA_DIR', './data'),
    nodeStaleSec: integer(env, 'NODE_STALE_SEC', 300, 1, 86_400),
    eventstoreUrl: eventStoreUrl(env),
    mongoUrl: url(env, 'MONGO_URL', ['mongodb:', 'mongodb+srv:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    authJwtSecret: jwtSecret(env),
    rateCard: rawCard === undefined ? DEFAULT_RATE_CARD : parseRateCard(rawCard),
    notifyWebhookUrl: url(env, 'NOTIFY_WEBHOOK_URL', ['http:', 'https:']),
    provisionerUrl: url(env, 'PROVISIONER_URL', ['http:', 'https:']),
    operationDeadlineSec: integer(env, 'OPERATION_DEADLINE_SEC', 1800, 1, 604_800),
    logLevel: logLevel as Config['logLevel'],
    cordonSyncSec: integer(env, 'CORDON_SYNC_SEC', 15, 1, 3600),
    massFailureRatio: ratio(env, 'MASS_FAILURE_RATIO', 0.55),
    massFailureMinNodes: integer(env, 'MASS_FAILURE_MIN_NODES', 3, 1, 1_000_000),
    drainParallelism: integer(env, 'DRAIN_PARALLELISM', 4, 1, 1000),
    redisPrefix: present(env, 'REDIS_PREFIX') ?? 'fleet',
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    heapGrowthPercent: integer(env, 'HEAP_GROWTH_PERCENT', 30, 0, 400),
    jobsRepairSec: integer(env, 'JOBS_REPAIR_SEC', 10, 1, 3600),
    startTimeoutSec: integer(env, 'START_TIMEOUT_SEC', 60, 1, 3600),
    leaderLeaseSec: integer(env, 'LEADER_LEASE_SEC', 10, 1, 3600),
    backupBucket: bucket(env, 'BACKUP_BUCKET', 's3://fleet-backups'),
    veleroUrl: url(env, 'VELERO_URL', ['http:', 'https:']),
  };
};
