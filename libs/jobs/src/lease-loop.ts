import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { consoleFailureSink, FailureSink, ThrottledLog } from '@fleet/kernel/throttled-log';
import { settleWithin } from '@fleet/kernel/within';
import { LeaderLease, LeadershipChange, LeaseStore, LeaseTiming } from './leader-lease';

type Term = { readonly epoch: number; validUntil: number };

export type LeaseLoopOptions = {
  /** Where failures to reach the store are logged (once per 10 s); default stderr. */
  readonly log?: FailureSink;
  /** Monotonic milliseconds (default `performance.now`): a wall clock set back must not extend a term. */
  readonly now?: () => number;
};

/**
 * The election over a LeaseStore, the same for every store: a follower tries to take the lease
 * every `renewEveryMs` (sooner when the holder's lease runs out sooner); the leader renews it
 * as often, and counts itself the leader until `renewDeadlineMs` after the last renewal it
 * sent that the store confirmed. A renewal the store refuses (the lease expired or was taken)
 * ends the term at once; renewals that fail (store out of reach, no answer) end it at the
 * deadline, before the store can give the lease to another. Each term has its own token, so
 * a term once ended is never renewed again, only a new one taken.
 */
export class LeaseLoop implements LeaderLease {
  private token = randomUUID();
  private term: Term | null = null;
  /** The highest epoch seen: a new term is taken above it even if the store lost its counter. */
  private highestEpoch = 0;
  private running = false;
  private nextAttempt: NodeJS.Timeout | null = null;
  private deadline: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private readonly listeners: Array<(change: LeadershipChange) => void> = [];
  private readonly failures: ThrottledLog;
  private readonly now: () => number;

  constructor(
    private readonly store: LeaseStore,
    readonly timing: LeaseTiming,
    options: LeaseLoopOptions = {},
  ) {
    this.failures = new ThrottledLog(options.log ?? consoleFailureSink);
    this.now = options.now ?? (() => performance.now());
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.attempt();
  }

  isLeader(): boolean {
    return this.term !== null && this.now() < this.term.validUntil;
  }

  epoch(): number | null {
    return this.isLeader() ? this.term!.epoch : null;
  }

  onChange(listener: (change: LeadershipChange) => void): void {
    this.listeners.push(listener);
  }

  raiseFloor(epoch: number): void {
    this.highestEpoch = Math.max(this.highestEpoch, epoch);
    if (this.term && this.term.epoch <= epoch) this.endTerm(this.term);
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.halt();
    // A try that takes the lease after this is given up below, under the same token.
    await this.inFlight;
    const token = this.token;
    if (this.term) this.endTerm(null);
    await settleWithin(this.store.resign(token), this.timing.renewEveryMs);
    await this.store.close();
  }

  /**
   * Stops renewing without giving the lease up, as a SIGKILL would (specs): the lease runs out
   * in the store, and `isLeader()` turns false at the deadline. Nobody is told.
   */
  abandon(): void {
    this.halt();
    if (this.deadline) clearTimeout(this.deadline);
    void this.store.close().catch(() => undefined);
  }

  private halt(): void {
    this.running = false;
    if (this.nextAttempt) clearTimeout(this.nextAttempt);
    this.nextAttempt = null;
  }

  private async attempt(): Promise<void> {
    this.nextAttempt = null;
    const attempt = this.term ? this.renew(this.term) : this.acquire();
    this.inFlight = attempt.then(() => undefined);
    const delay = await attempt;
    this.inFlight = null;
    if (!this.running) return;
    this.nextAttempt = setTimeout(() => void this.attempt(), delay);
    this.nextAttempt.unref();
  }

  /** Resolves the delay before the next attempt. */
  private async acquire(): Promise<number> {
    const { leaseMs, renewEveryMs } = this.timing;
    const sentAt = this.now();
    const answer = await settleWithin(
      this.store.acquire(this.token, leaseMs, this.highestEpoch),
      renewEveryMs,
    );
    if (!this.running) return renewEveryMs;
    if (answer.status !== 'fulfilled') {
      this.unreachable('taking', answer.status === 'late' ? 'no answer' : answer.reason);
      return renewEveryMs;
    }
    this.failures.clear();
    const result = answer.value;
    this.highestEpoch = Math.max(this.highestEpoch, result.epoch);
    // The holder's lease runs out then unless renewed; a resignation frees it sooner.
    if (!result.acquired) return Math.min(renewEveryMs, Math.max(1, result.remainingMs + 1));
    const term: Term = { epoch: result.epoch, validUntil: 0 };
    this.term = term;
    this.extend(term, sentAt);
    this.notify({ leader: true, epoch: term.epoch });
    return renewEveryMs;
  }

  private async renew(term: Term): Promise<number> {
    const { leaseMs, renewEveryMs } = this.timing;
    const sentAt = this.now();
    const answer = await settleWithin(this.store.renew(this.token, leaseMs), renewEveryMs);
    // Stopped, or the deadline ended the term while the renewal was out.
    if (!this.running || this.term !== term) return renewEveryMs;
    if (answer.status !== 'fulfilled') {
      this.unreachable('renewing', answer.status === 'late' ? 'no answer' : answer.reason);
      return renewEveryMs;
    }
    this.failures.clear();
    if (answer.value) {
      this.extend(term, sentAt);
      return renewEveryMs;
    }
    this.endTerm(null);
    return 0; // a new term at once if the lease is free
  }

  /** The store confirmed a renewal sent at `sentAt`: it keeps the lease until `leaseMs` after. */
  private extend(term: Term, sentAt: number): void {
    term.validUntil = sentAt + this.timing.renewDeadlineMs;
    this.armDeadline(term);
  }

  /** Tells the listeners when the term ends by the clock (isLeader() says so on its own). */
  private armDeadline(term: Term): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = setTimeout(
      () => {
        if (this.term !== term) return;
        if (this.isLeader()) this.armDeadline(term);
        else this.endTerm(term);
      },
      Math.max(0, term.validUntil - this.now()),
    );
    this.deadline.unref();
  }

  /**
   * Ends the current term (`expired`: at its deadline) and gives its lease up, in case the
   * store still holds it for this term (a renewal that got through late): the next leader
   * need not wait for it to run out. The next term is taken under a new token.
   */
  private endTerm(expired: Term | null): void {
    const term = this.term!;
    this.term = null;
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
    if (expired) void this.store.resign(this.token).catch(() => undefined);
    this.token = randomUUID();
    this.notify({ leader: false, epoch: term.epoch });
  }

  private notify(change: LeadershipChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.failures.failure('leader lease: a listener of leadership changes threw', error);
      }
    }
  }

  private unreachable(doing: string, error: unknown): void {
    const then = this.term ? '; the term ends at its deadline unless a renewal gets through' : '';
    this.failures.log(`lease ${doing}`, `leader lease: ${doing} it failed${then}`, error);
  }
}
