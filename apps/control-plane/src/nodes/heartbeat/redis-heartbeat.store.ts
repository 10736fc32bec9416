import type { ChainableCommander, default as Redis } from 'ioredis';
import { ThrottledLog } from '@fleet/kernel';
import { failureLog } from '../../platform/observability/logger';
import {
  RequestPathRedis,
  isRedisUnreachable,
  unavailableAs,
} from '../../platform/runtime/redis-unavailable';
import type { Beat, Heartbeat, HeartbeatStore } from './heartbeat.store';
import { Slot, laterObserved, readSlot, writeSlots } from './heartbeat-slots';
import { CLAIM_ORDER_LUA, claimAnswers } from './heartbeat-order';

/**
 * A node's stored `seenAt:observedAt` and this process's own record of it, the later of each
 * time (as `writeSlots` keeps them), as one new object: a read of 1000 nodes makes 1000.
 */
const laterBeat = (raw: string | null | undefined, slot: Slot | undefined): Heartbeat | null => {
  if (raw === null || raw === undefined) {
    return slot === undefined ? null : { seenAt: slot.seenAt, observedAt: slot.observedAt };
  }
  const sep = raw.indexOf(':');
  let seenAt = Number(sep < 0 ? raw : raw.slice(0, sep));
  let observedAt = sep < 0 || sep === raw.length - 1 ? null : Number(raw.slice(sep + 1));
  if (slot !== undefined) {
    seenAt = Math.max(seenAt, slot.seenAt);
    observedAt = laterObserved(observedAt, slot.observedAt);
  }
  return { seenAt, observedAt };
};

/**
 * Writes each node's `seenAt:observedAt` field (ARGV: nodeId, seenAt, observedAt or '', for
 * each node), keeping the later of the stored and the given time for each: the monotonic
 * `writeSlots` in one round trip for the batch, so replicas racing cannot move a node back.
 * One HMGET and one HSET for all the nodes of a call (at most NODES_PER_COMMAND: `unpack`
 * stays far below Lua's stack limit): a call of Redis per node cost half the script's time.
 */
const TOUCH_LUA = `
local key = KEYS[1]
local n = #ARGV / 3
local fields = {}
for i = 1, n do fields[i] = ARGV[i * 3 - 2] end
local old = redis.call('HMGET', key, unpack(fields))
-- Each node's value so far: a node given twice keeps the later of its times too.
local new = {}
for i = 1, n do
  local seen, observed = ARGV[i * 3 - 1], ARGV[i * 3]
  local was = new[fields[i]] or old[i]
  local sep = was and string.find(was, ':', 1, true)
  if sep then
    local oldSeen, oldObserved = string.sub(was, 1, sep - 1), string.sub(was, sep + 1)
    local s = tonumber(oldSeen)
    if s and s > tonumber(seen) then seen = oldSeen end
    local o = tonumber(oldObserved)
    if o and (observed == '' or o > tonumber(observed)) then observed = oldObserved end
  end
  new[fields[i]] = seen .. ':' .. observed
end
local out, k = {}, 0
for field, value in pairs(new) do
  out[k + 1], out[k + 2] = field, value
  k = k + 2
end
redis.call('HSET', key, unpack(out))
return 0
`;

/** The client with TOUCH_LUA defined on it (EVALSHA once the connection has loaded it). */
type TouchingRedis = Redis & {
  touchHeartbeats(key: string, ...args: string[]): Promise<number>;
  claimHeartbeatOrder(key: string, ...args: string[]): Promise<string[]>;
};
type TouchingPipeline = ChainableCommander & {
  touchHeartbeats(key: string, ...args: string[]): ChainableCommander;
};

/**
 * Nodes per command of a batch: Redis runs one command at a time, and a batch of a busy turn
 * (ten 1000-node reports) in one script would hold every other client for tens of ms.
 */
const NODES_PER_COMMAND = 1000;

/** A caller waiting for its part of a turn's batch. */
type Waiter<T> = { resolve(value: T): void; reject(error: unknown): void };
/** A write of the turn's batch, in the order asked: a touch of some nodes, or a removal. */
type WriteOp =
  | { readonly kind: 'touch'; readonly args: string[] }
  | { readonly kind: 'remove'; readonly nodeId: string };
/** A read of the turn's batch: its node ids, where its answers start in the batch's, its caller. */
type ReadOp = {
  readonly nodeIds: readonly string[];
  readonly from: number;
  readonly waiter: Waiter<Array<Heartbeat | null>>;
};

/**
 * One Redis hash, one field per node. The reads and writes asked for in one turn of the event
 * loop go to Redis together, on `setImmediate`: one pipeline holding the turn's writes in the
 * order asked (the touches of consecutive reports merged into one TOUCH_LUA call, a removal
 * between them kept in its place), then one HMGET of every node read; each caller gets its own
 * part of the answers, or the batch's error. A busy turn is one write to the socket and one
 * round trip, whatever the number of reports in it.
 *
 * Beside it, the last heartbeat this process recorded for each node: when Redis comes back
 * empty (restarted, flushed), a node's real last report is still known here, and a node
 * that fell silent before the loss goes offline at that report, where its sessions' bills
 * end, instead of at the moment the loss was noticed; and the report order (`observedAt`)
 * it had reached holds, so a delayed older report cannot roll the node back. Reads answer the
 * later of the two (`laterBeat`): a sighting written here but not yet in Redis is not lost to
 * this process's next report of the node.
 */
export class RedisHeartbeatStore implements HeartbeatStore {
  private readonly link: RequestPathRedis;
  private readonly redis: TouchingRedis;
  private readonly key: string;
  /** One slot per node, overwritten in place (`writeSlots`). */
  private readonly recorded = new Map<string, Slot>();
  /** Out of reach since the last command answered: disconnected, or stalled (timed out). */
  private lost = false;
  /**
   * The last batch's writes failed (for whatever reason: out of reach, out of memory, a
   * read-only replica): reports wait for their sightings (`touchLater` declines) until a
   * batch's writes succeed again, so a store that cannot write answers 503, not 200.
   */
  private failing = false;
  /** This process's start, until the store is out of reach and back. */
  private restored = Date.now();
  private readonly refused = unavailableAs('heartbeat store (Redis)');
  private readonly unavailable = (error: unknown): never => {
    if (isRedisUnreachable(error)) this.lost = true;
    return this.refused(error);
  };
  /** Sightings no caller waits for that could not be written: logged once per 10 s. */
  private readonly unwritten = new ThrottledLog(failureLog('heartbeats'));

  /** The turn's batch, sent on `setImmediate`. */
  private writes: WriteOp[] = [];
  private writeWaiters: Array<Waiter<void>> = [];
  private reads: ReadOp[] = [];
  private readIds: string[] = [];
  /** Nodes of the turn's writes taken by `touchLater`: no caller hears if they fail. */
  private untold = 0;
  private scheduled = false;
  /** Batches sent (pipelines), for tests and the bench. */
  batches = 0;

  constructor(url: string, prefix: string) {
    this.link = new RequestPathRedis(url, 'heartbeats', 'heartbeat store (Redis)');
    this.link.client.defineCommand('touchHeartbeats', { numberOfKeys: 1, lua: TOUCH_LUA });
    this.link.client.defineCommand('claimHeartbeatOrder', {
      numberOfKeys: 1,
      lua: CLAIM_ORDER_LUA,
    });
    this.redis = this.link.client as TouchingRedis;
    this.key = `${prefix}:heartbeats`;
    this.redis.on('close', () => (this.lost = true));
    this.redis.on('ready', () => this.answered());
  }

  /** Reachable again after being out of reach: reports could not be recorded until now. */
  private answered(): void {
    if (!this.lost) return;
    this.lost = false;
    this.restored = Date.now();
  }

  async touch(beats: readonly Beat[]): Promise<void> {
    if (beats.length === 0) return;
    const down = this.link.connected();
    if (down) await down;
    await new Promise<void>((resolve, reject) => {
      this.addTouch(beats);
      this.writeWaiters.push({ resolve, reject });
    });
  }

  /**
   * Takes the sightings into this turn's batch without the caller waiting for Redis: recorded
   * here at once (this process's next read of the node sees them whatever Redis answers), in
   * Redis a round trip later. Declines (false) while the store is not known to be writing:
   * disconnected, or its last batch's writes failed; the caller then awaits `touch`.
   */
  touchLater(beats: readonly Beat[]): boolean {
    if (this.failing || this.lost || this.redis.status !== 'ready') return false;
    if (beats.length === 0) return true;
    this.addTouch(beats);
    this.untold += beats.length;
    return true;
  }

  /**
   * Into the turn's batch, and into this process's record at once: the record follows the
   * calls in their order (a removal and a touch of one node in one turn end as asked).
   */
  private addTouch(beats: readonly Beat[]): void {
    writeSlots(this.recorded, beats);
    let last = this.writes[this.writes.length - 1];
    // A report's nodes share their receive time (and often their observedAt): one string each.
    let seen = NaN;
    let seenText = '';
    let observed: number | null = null;
    let observedText = '';
    for (const b of beats) {
      if (last?.kind !== 'touch' || last.args.length >= NODES_PER_COMMAND * 3) {
        last = { kind: 'touch', args: [] };
        this.writes.push(last);
      }
      if (b.seenAt !== seen) seenText = String((seen = b.seenAt));
      if (b.observedAt !== observed) {
        observed = b.observedAt;
        observedText = observed === null ? '' : String(observed);
      }
      last.args.push(b.nodeId, seenText, observedText);
    }
    this.schedule();
  }

  async get(nodeIds: readonly string[]): Promise<Array<Heartbeat | null>> {
    if (nodeIds.length === 0) return [];
    const down = this.link.connected();
    if (down) await down;
    return new Promise<Array<Heartbeat | null>>((resolve, reject) => {
      this.reads.push({ nodeIds, from: this.readIds.length, waiter: { resolve, reject } });
      for (const id of nodeIds) this.readIds.push(id);
      this.schedule();
    });
  }

  async remove(nodeId: string): Promise<void> {
    const down = this.link.connected();
    if (down) await down;
    // Forgotten here at once: a touch of the node asked for after this one starts afresh.
    this.recorded.delete(nodeId);
    await new Promise<void>((resolve, reject) => {
      this.writes.push({ kind: 'remove', nodeId });
      this.writeWaiters.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  /** Sends the turn's batch: its writes in order, then its reads, in one pipeline. */
  private readonly flush = (): void => {
    this.scheduled = false;
    const { writes, writeWaiters, reads, readIds, untold } = this;
    this.writes = [];
    this.writeWaiters = [];
    this.reads = [];
    this.readIds = [];
    this.untold = 0;
    this.batches++;
    const pipeline = this.redis.pipeline() as TouchingPipeline;
    for (const op of writes) {
      if (op.kind === 'touch') pipeline.touchHeartbeats(this.key, ...op.args);
      else pipeline.hdel(this.key, op.nodeId);
    }
    for (let i = 0; i < readIds.length; i += NODES_PER_COMMAND) {
      pipeline.hmget(this.key, ...readIds.slice(i, i + NODES_PER_COMMAND));
    }
    this.link.bounded(pipeline.exec()).then(
      (results) => this.settle(results ?? [], writes.length, untold, writeWaiters, reads, readIds),
      (error: unknown) => this.fail(error, writes.length > 0, untold, writeWaiters, reads),
    );
  };

  private settle(
    results: Array<[Error | null, unknown]>,
    writeCount: number,
    untold: number,
    writeWaiters: ReadonlyArray<Waiter<void>>,
    reads: readonly ReadOp[],
    readIds: readonly string[],
  ): void {
    let writeError: Error | null = null;
    let readError: Error | null = null;
    for (let i = 0; i < results.length; i++) {
      const error = results[i][0];
      if (error && i < writeCount) writeError ??= error;
      else if (error) readError ??= error;
    }
    if (writeError) this.fail(writeError, true, untold, writeWaiters, []);
    else {
      if (writeCount > 0) this.failing = false;
      for (const w of writeWaiters) w.resolve();
    }
    if (readError) return this.fail(readError, false, 0, [], reads);
    if (this.lost && !writeError) this.answered();
    if (reads.length === 0) return;
    const raw: Array<string | null> = [];
    for (let i = writeCount; i < results.length; i++) {
      for (const value of results[i][1] as Array<string | null>) raw.push(value);
    }
    for (const read of reads) {
      const beats = new Array<Heartbeat | null>(read.nodeIds.length);
      for (let j = 0; j < read.nodeIds.length; j++) {
        const value = raw[read.from + j];
        // The later of Redis's and this process's own record (lost with Redis, or not there yet).
        beats[j] = laterBeat(value, this.recorded.get(readIds[read.from + j]));
      }
      read.waiter.resolve(beats);
    }
  }

  /** Every caller of the batch (or of its failed part) gets the error; nothing is left waiting. */
  private fail(
    error: unknown,
    wrote: boolean,
    untold: number,
    writeWaiters: ReadonlyArray<Waiter<void>>,
    reads: readonly ReadOp[],
  ): void {
    let reason: unknown;
    try {
      this.unavailable(error);
      reason = error;
    } catch (mapped) {
      reason = mapped;
    }
    if (wrote) this.failing = true;
    // Sightings taken by `touchLater` have no caller to tell: their reports were answered.
    if (wrote && untold > 0) {
      this.unwritten.failure(
        `sightings of ${untold} node(s) answered to reports could not be written to Redis`,
        error,
      );
    }
    for (const w of writeWaiters) w.reject(reason);
    for (const r of reads) r.waiter.reject(reason);
  }

  restoredAt(): number {
    return this.restored;
  }

  recordedHere(nodeIds: readonly string[]): Array<Heartbeat | null> {
    return nodeIds.map((id) => readSlot(this.recorded, id));
  }

  /** heartbeat-order.ts: one round trip, in place of the changing report's `ping`. */
  async claimOrder(beats: readonly Beat[]): Promise<Array<number | null>> {
    await this.link.connected();
    const args: string[] = [];
    for (const b of beats) args.push(b.nodeId, String(b.seenAt), String(b.observedAt ?? ''));
    const answers = await this.link
      .bounded(this.redis.claimHeartbeatOrder(this.key, ...args))
      .catch(this.unavailable);
    if (this.lost) this.answered();
    const later = claimAnswers(answers);
    writeSlots(
      this.recorded,
      beats.filter((_, i) => later[i] === null),
    );
    return later;
  }

  async ping(): Promise<void> {
    await this.link.connected();
    await this.link.bounded(this.redis.ping()).catch(this.unavailable);
    if (this.lost) this.answered();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
