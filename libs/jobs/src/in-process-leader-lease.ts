import { performance } from 'node:perf_hooks';
import { FailureSink } from '@fleet/kernel/throttled-log';
import {
  AcquireResult,
  LeaderLease,
  LeadershipChange,
  LeaseStore,
  LeaseTiming,
} from './leader-lease';
import { LeaseLoop } from './lease-loop';

/** The lease as a value in memory, kept by the same rules as the Redis key (specs share one). */
export class MemoryLeaseStore implements LeaseStore {
  private holder: { token: string; epoch: number; expiresAt: number } | null = null;
  private counter = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  async acquire(token: string, ttlMs: number, floor: number): Promise<AcquireResult> {
    const holder = this.current();
    const now = this.now();
    if (holder && holder.token !== token) {
      return { acquired: false, remainingMs: holder.expiresAt - now, epoch: holder.epoch };
    }
    if (holder) {
      holder.expiresAt = now + ttlMs;
      return { acquired: true, epoch: holder.epoch };
    }
    this.counter = Math.max(this.counter + 1, floor + 1);
    this.holder = { token, epoch: this.counter, expiresAt: now + ttlMs };
    return { acquired: true, epoch: this.counter };
  }

  async renew(token: string, ttlMs: number): Promise<boolean> {
    const holder = this.current();
    if (holder?.token !== token) return false;
    holder.expiresAt = this.now() + ttlMs;
    return true;
  }

  async resign(token: string): Promise<void> {
    if (this.current()?.token === token) this.holder = null;
  }

  async close(): Promise<void> {}

  /** Loses everything, as a Redis restarted empty does (specs). */
  forget(): void {
    this.holder = null;
    this.counter = 0;
  }

  private current(): { token: string; epoch: number; expiresAt: number } | null {
    if (this.holder && this.now() >= this.holder.expiresAt) this.holder = null;
    return this.holder;
  }
}

export type SharedMemoryLease = {
  readonly store: LeaseStore;
  readonly timing: LeaseTiming;
  readonly log?: FailureSink;
};

/**
 * The embedded default: that mode is one process by design (SQLite's exclusive lock enforces
 * it), so there is nobody to elect: it leads from its start to its stop, in epoch 1 (or past the
 * newest term its log recorded, `raiseFloor`), and never
 * steps down (an event loop stalled for seconds must not skip its periodic work). Given a
 * store shared with other contenders in the process (`shared`), it is elected by the same
 * rules as the Redis lease instead: how the election is specified without Redis.
 */
export class InProcessLeaderLease implements LeaderLease {
  private readonly loop: LeaseLoop | null;
  private leading = false;
  /** Alone, its term: 1, unless the log recorded a later one (the data was led with Redis). */
  private term = 1;
  private readonly listeners: Array<(change: LeadershipChange) => void> = [];

  constructor(shared?: SharedMemoryLease) {
    this.loop = shared ? new LeaseLoop(shared.store, shared.timing, { log: shared.log }) : null;
  }

  async start(): Promise<void> {
    if (this.loop) return this.loop.start();
    if (this.leading) return;
    this.leading = true;
    this.tell({ leader: true, epoch: this.term });
  }

  isLeader(): boolean {
    return this.loop ? this.loop.isLeader() : this.leading;
  }

  epoch(): number | null {
    if (this.loop) return this.loop.epoch();
    return this.leading ? this.term : null;
  }

  raiseFloor(epoch: number): void {
    if (this.loop) return this.loop.raiseFloor(epoch);
    if (epoch < this.term) return;
    if (this.leading) this.tell({ leader: false, epoch: this.term });
    this.term = epoch + 1;
    if (this.leading) this.tell({ leader: true, epoch: this.term });
  }

  private tell(change: LeadershipChange): void {
    for (const listener of this.listeners) listener(change);
  }

  onChange(listener: (change: LeadershipChange) => void): void {
    if (this.loop) this.loop.onChange(listener);
    else this.listeners.push(listener);
  }

  async stop(): Promise<void> {
    if (this.loop) return this.loop.stop();
    if (!this.leading) return;
    this.leading = false;
    this.tell({ leader: false, epoch: this.term });
  }

  /** As a SIGKILL: stops without giving the lease up (specs). */
  abandon(): void {
    if (this.loop) this.loop.abandon();
    else this.leading = false;
  }
}
