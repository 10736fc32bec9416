/**
 * Which process runs the background work that is not a job (periodic loops): the one holding
 * the lease. Jobs already run once across workers; a loop run in every replica would not.
 */

/** A change of this process's leadership: a term won, or lost (the epoch of the term it ended). */
export type LeadershipChange = { readonly leader: boolean; readonly epoch: number };

export interface LeaderLease {
  /**
   * Takes part in the election. Resolves once the first attempt answered (or failed), so a
   * process alone with its store leads from its start.
   */
  start(): Promise<void>;
  /**
   * Whether this process leads now. Read off the clock, not set by a timer: it turns false at
   * the renew deadline even when the event loop is late, before another can take the lease.
   */
  isLeader(): boolean;
  /** The fencing epoch of the term this process leads, else null. Each new term's is higher. */
  epoch(): number | null;
  /** Told of every term won and lost, in order. */
  onChange(listener: (change: LeadershipChange) => void): void;
  /**
   * A term at least this old is stale (the log recorded `epoch`: a store that lost its counter
   * handed out an old one): ends this process's term if it is one, and the next is taken above.
   */
  raiseFloor(epoch: number): void;
  /** Stops taking part and gives the lease up if held, so another takes it at once. */
  stop(): Promise<void>;
}

/** The timing of an election, all derived from the lease's length. */
export type LeaseTiming = {
  /** How long the store keeps the lease after a take or renewal it answered. */
  readonly leaseMs: number;
  /** How often the leader renews, and a follower tries to take the lease (at the latest). */
  readonly renewEveryMs: number;
  /**
   * How long after a successful renewal was sent the leader still counts itself the leader.
   * Shorter than the lease, so it steps down before the store can give the lease to another:
   * the margin absorbs clock rates that differ and a late event loop.
   */
  readonly renewDeadlineMs: number;
};

/**
 * Renewals every fifth of the lease (three tries before the deadline fails one), the deadline
 * at two thirds of it (10 s: renew every 2 s, step down 6.7 s after the last renewal sent).
 */
export const leaseTiming = (leaseMs: number): LeaseTiming => ({
  leaseMs,
  renewEveryMs: Math.max(1, Math.floor(leaseMs / 5)),
  renewDeadlineMs: Math.floor((leaseMs * 2) / 3),
});

/** What the store says to a try at taking the lease. */
export type AcquireResult =
  | { readonly acquired: true; readonly epoch: number }
  /** Another holds it: for `remainingMs` at most unless renewed, in the term of `epoch`. */
  | { readonly acquired: false; readonly remainingMs: number; readonly epoch: number };

/** Where the lease lives (one key in Redis, a map in memory). Every call is atomic. */
export interface LeaseStore {
  /**
   * Takes the lease for `token` if nobody holds it, for `ttlMs`: a new term, whose epoch is the
   * store's counter incremented, and above `floor` (the highest epoch this contender saw, so a
   * store that lost its counter does not go back). If `token` holds it already (an earlier
   * try whose answer was lost), it is renewed and its term's epoch returned.
   */
  acquire(token: string, ttlMs: number, floor: number): Promise<AcquireResult>;
  /** Extends the lease by `ttlMs` if `token` holds it; false when it does not (expired, taken). */
  renew(token: string, ttlMs: number): Promise<boolean>;
  /** Deletes the lease if `token` holds it. */
  resign(token: string): Promise<void>;
  close(): Promise<void>;
}
