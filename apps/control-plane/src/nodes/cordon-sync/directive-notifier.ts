import { LogPosition } from '@fleet/eventstore/port';

/** Why a long-poll waiter was released. */
export type WakeReason = 'changed' | 'timeout' | 'closed';

export type Waiter = {
  /** Resolves once: a directive of the cluster changed, the time ran out, or the app is closing. */
  readonly released: Promise<WakeReason>;
  /** Drops the waiter without waiting (the caller answered already). */
  cancel(): void;
};

type Entry = {
  readonly clusterId: string;
  readonly since: LogPosition;
  readonly timer: NodeJS.Timeout | null;
  readonly resolve: (reason: WakeReason) => void;
};

/**
 * In-process rendezvous between long-polls and directive changes, keyed by cluster. Many
 * waiters per cluster; each is released exactly once (changed, timeout or closed). Holds no
 * data: a released waiter re-reads the log from its cursor, so a spurious wake costs a query,
 * never a wrong answer.
 */
export class DirectiveNotifier {
  private readonly waiters = new Map<string, Set<Entry>>();
  private closing = false;

  get closed(): boolean {
    return this.closing;
  }

  /** Waiters currently held, over every cluster. */
  get size(): number {
    let n = 0;
    for (const set of this.waiters.values()) n += set.size;
    return n;
  }

  /** The oldest cursor any waiter reads from: where the log tail must start looking. */
  oldestSince(): LogPosition | null {
    let oldest: LogPosition | null = null;
    for (const set of this.waiters.values()) {
      for (const e of set) oldest = oldest === null || e.since < oldest ? e.since : oldest;
    }
    return oldest;
  }

  /** Registers a waiter for `clusterId` before the caller reads, so no change can slip between. */
  wait(clusterId: string, since: LogPosition, timeoutMs: number): Waiter {
    if (this.closing) return { released: Promise.resolve('closed'), cancel: () => undefined };
    if (timeoutMs <= 0) return { released: Promise.resolve('timeout'), cancel: () => undefined };
    let entry!: Entry;
    const released = new Promise<WakeReason>((resolve) => {
      const timer = setTimeout(() => release('timeout'), timeoutMs);
      timer.unref?.();
      entry = { clusterId, since, timer, resolve };
    });
    const set = this.waiters.get(clusterId) ?? new Set<Entry>();
    set.add(entry);
    this.waiters.set(clusterId, set);
    const release = (reason: WakeReason): void => this.release(entry, reason);
    return { released, cancel: () => release('timeout') };
  }

  /** A directive of this cluster changed: every waiter of the cluster answers now. */
  wake(clusterId: string): void {
    const set = this.waiters.get(clusterId);
    if (!set) return;
    for (const entry of [...set]) this.release(entry, 'changed');
  }

  /** Shutdown: releases every waiter and refuses to hold new ones. */
  closeAll(): void {
    this.closing = true;
    for (const set of [...this.waiters.values()]) {
      for (const entry of [...set]) this.release(entry, 'closed');
    }
  }

  private release(entry: Entry, reason: WakeReason): void {
    const set = this.waiters.get(entry.clusterId);
    if (!set?.delete(entry)) return; // released already
    if (set.size === 0) this.waiters.delete(entry.clusterId);
    if (entry.timer) clearTimeout(entry.timer);
    entry.resolve(reason);
  }
}
