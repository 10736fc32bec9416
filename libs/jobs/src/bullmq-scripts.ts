import { Queue } from 'bullmq';

// How our ids map onto BullMQ's, and the scripts that read BullMQ's keys beside its own.

/** What a BullMQ job carries: the logical id and runAt survive retries exactly. */
export type StoredJob = {
  readonly jobId: string;
  readonly runAt: number;
  readonly payload: unknown;
};

/**
 * One pending run per logical id, kept by BullMQ's own deduplication (keyed by the id) with
 * `replace` (a delayed job is swapped for the new one in the same script) and
 * `keepLastIfActive` (scheduled while a run goes on, the new one is stored and enqueued by the
 * script that ends that run, the last one winning). So no schedule is lost between a remove and
 * an add, and runs of one id never overlap. Every add gets a new BullMQ id (`<token>~<id>`);
 * one exception remains, a run that is due and waiting for a worker: deduplication keeps it
 * and drops the add, which `flush` sees and answers by removing that run and adding again.
 * A run enqueued when another ends counts its delay from that end: it starts no earlier than
 * its runAt, later by at most what remained of the run it waited for.
 */
export const DEDUPLICATION = { replace: true, keepLastIfActive: true } as const;
/** encodeURIComponent removes ':' (refused by BullMQ); the token before '~' keeps ids unique. */
export const encodeId = (jobId: string): string => encodeURIComponent(jobId);
export const logicalId = (id: string): string | null => {
  const tilde = id.indexOf('~');
  return tilde > 0 ? decodeURIComponent(id.slice(tilde + 1)) : null;
};

/**
 * Our scripts, beside BullMQ's on the same connection. They read BullMQ's keys: the
 * deduplication key (`de:<id>`, the BullMQ id of the id's current run), the next run kept
 * while it runs (`dn:<id>`, a hash whose `jid` is that run's BullMQ id), the job hash.
 */
export const SCRIPTS = {
  /**
   * Right after an add in the same pipeline: 1 when the add is in place (current, kept as
   * the next run, or already enqueued from there), else 0. A deduplication key naming a job
   * that no longer exists would drop every add: it is deleted then.
   * KEYS: de, dn, our job; ARGV: our id, queue key prefix.
   */
  fleetJobsLanded: {
    numberOfKeys: 3,
    lua: `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] or redis.call('HGET', KEYS[2], 'jid') == ARGV[1]
  or redis.call('EXISTS', KEYS[3]) == 1 then return 1 end
if current and redis.call('EXISTS', ARGV[2] .. current) == 0 then redis.call('DEL', KEYS[1]) end
return 0`,
  },
  /**
   * The data of the id's pending run: its current job unless that runs, else the next run
   * kept for after it. KEYS: de, active, dn; ARGV: queue key prefix.
   */
  fleetJobsPending: {
    numberOfKeys: 3,
    lua: `
local current = redis.call('GET', KEYS[1])
if not current then return false end
if redis.call('LPOS', KEYS[2], current) then return redis.call('HGET', KEYS[3], 'data') end
return redis.call('HGET', ARGV[1] .. current, 'data')`,
  },
  /**
   * After `cancel` removed (or could not remove: it runs) the job `ARGV[1]`: 0 when another
   * run took its place meanwhile (look again), else 1, having dropped the next run kept for
   * after a running one, or a deduplication key naming no job. KEYS: de, dn; ARGV: id, prefix.
   */
  fleetJobsCancelled: {
    numberOfKeys: 2,
    lua: `
local current = redis.call('GET', KEYS[1])
if not current then return 1 end
if current ~= ARGV[1] then return 0 end
if redis.call('EXISTS', ARGV[2] .. current) == 0 then redis.call('DEL', KEYS[1]) return 1 end
redis.call('DEL', KEYS[2])
return 1`,
  },
  /**
   * The period of a job scheduler whose next job exists, else nil (missing, or its next job
   * lost: a Redis restarted empty or flushed). KEYS: repeat; ARGV: scheduler id, prefix.
   */
  fleetJobsSchedulerEvery: {
    numberOfKeys: 1,
    lua: `
local nextAt = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not nextAt then return false end
if redis.call('EXISTS', ARGV[2] .. 'repeat:' .. ARGV[1] .. ':' .. nextAt) == 0 then return false end
return redis.call('HGET', KEYS[1] .. ':' .. ARGV[1], 'every')`,
  },
} as const;

/** Our keys of an id in BullMQ's layout: its deduplication key, its next run kept, the prefix. */
export const keysOf = (q: Queue, jobId: string): { de: string; dn: string; prefix: string } => {
  const id = encodeId(jobId);
  return { de: `${q.keys.de}:${id}`, dn: `${q.keys['']}dn:${id}`, prefix: q.keys[''] };
};
