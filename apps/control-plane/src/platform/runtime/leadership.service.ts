import { Inject, Injectable, Logger } from '@nestjs/common';
import type { LeaderLease } from '@fleet/jobs/leader-lease';

/** The LeaderLease the app runs on: in Redis with REDIS_URL, else this process alone leads. */
export const LEADER_LEASE = Symbol('LEADER_LEASE');

/**
 * Whether this replica leads, for what runs in the leader only (the Runtime's periodic work)
 * and for readiness and metrics. The Runtime starts it with the background work and resigns
 * on shutdown, so another replica takes over at once rather than when the lease runs out.
 */
@Injectable()
export class Leadership {
  private readonly logger = new Logger('leadership');
  private resigning = false;

  constructor(@Inject(LEADER_LEASE) private readonly lease: LeaderLease) {
    lease.onChange(({ leader, epoch }) => {
      if (leader) this.logger.log(`leading (epoch ${epoch}): periodic work runs here`);
      else if (this.resigning) this.logger.log(`resigned (epoch ${epoch})`);
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

  resign(): Promise<void> {
    this.resigning = true;
    return this.lease.stop();
  }
}
