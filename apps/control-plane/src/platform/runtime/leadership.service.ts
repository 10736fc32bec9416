import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { LEADERSHIP_STREAM, StaleLeaderError } from '@fleet/eventstore/port';
import type { LeaderLease } from '@fleet/jobs/leader-lease';
import { isoTime, systemContext, uuidFrom } from '@fleet/kernel';
import { leadershipAggregate } from './leadership-terms';

/** The LeaderLease the app runs on: in Redis with REDIS_URL, else this process alone leads. */
export const LEADER_LEASE = Symbol('LEADER_LEASE');

/**
 * Whether this replica leads, for what runs in the leader only (the Runtime's periodic work)
 * and for readiness and metrics. The Runtime starts it with the background work and resigns
 * on shutdown, so another replica takes over at once rather than when the lease runs out.
 *
 * Fencing: a term's periodic work runs only once the term is recorded in the log
 * (`termRecorded`); from then on the event store refuses any append of an older term, so a
 * replica that lost the lease (paused, cut off) cannot write late.
 */
@Injectable()
export class Leadership {
  private readonly logger = new Logger('leadership');
  private resigning = false;
  /** The term recorded (or being recorded) in the log, with its outcome. */
  private recording: { epoch: number; recorded: Promise<boolean> } | null = null;

  constructor(
    @Inject(LEADER_LEASE) private readonly lease: LeaderLease,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    /**
     * Whether terms are recorded: with an event store replicas share (EVENTSTORE_URL). The
     * embedded log is one process's by design (its exclusive lock), with nobody to fence.
     */
    private readonly recordTerms = true,
  ) {
    lease.onChange(({ leader, epoch }) => {
      if (leader) {
        this.logger.log(`leading (epoch ${epoch}): periodic work runs here`);
        void this.termRecorded(epoch);
      } else if (this.resigning) this.logger.log(`resigned (epoch ${epoch})`);
      else this.logger.warn(`no longer leading (epoch ${epoch}): periodic work stops here`);
    });
  }

  start(): Promise<void> {
    return this.lease.start();
  }

  isLeader(): boolean {
    return this.lease.isLeader();
  }

  /** The fencing epoch of this replica's term, or null when it does not lead. */
  epoch(): number | null {
    return this.lease.epoch();
  }

  /**
   * Whether term `epoch` is recorded in the log, recording it the first time: false while the
   * store cannot (tried again at the next call), or for good when the log holds a newer term,
   * which ends this term (the lease's counter was lost: the next term is taken above it).
   */
  termRecorded(epoch: number): Promise<boolean> {
    if (!this.recordTerms) return Promise.resolve(true);
    if (this.recording?.epoch === epoch) return this.recording.recorded;
    const recorded = this.record(epoch);
    const entry = { epoch, recorded };
    this.recording = entry;
    void recorded.then((ok) => {
      if (!ok && this.recording === entry && this.lease.epoch() === epoch) this.recording = null;
    });
    return recorded;
  }

  private async record(epoch: number): Promise<boolean> {
    const now = new Date();
    const ctx = systemContext(uuidFrom('leadership-term', String(epoch)), {
      now,
      leaderEpoch: epoch,
    });
    const command = {
      type: 'TakeLeadership' as const,
      data: { epoch, at: isoTime(now.getTime()) },
    };
    try {
      await this.pipeline.handle(leadershipAggregate, LEADERSHIP_STREAM, command, ctx);
      return true;
    } catch (error) {
      if (error instanceof StaleLeaderError) {
        this.logger.warn(
          `term ${epoch} is older than term ${error.newest} in the log: stepping down`,
        );
        // Refused for good: this term never runs periodic work (set first: the lease may
        // start the next term at once, from raiseFloor).
        this.recording = { epoch, recorded: Promise.resolve(false) };
        this.lease.raiseFloor(error.newest ?? epoch);
        return false;
      }
      this.logger.warn(`term ${epoch} could not be recorded yet: ${String(error)}`);
      return false;
    }
  }

  resign(): Promise<void> {
    this.resigning = true;
    return this.lease.stop();
  }
}
