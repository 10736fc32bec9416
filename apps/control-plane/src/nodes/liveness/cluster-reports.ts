import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { Clock, CommandContext, uuidFrom } from '@fleet/kernel';
import { GetClusterLiveness, ResumeClusterReports } from '../../clusters';

/**
 * How long a cluster found not stalled is taken as still not stalled by the reports that
 * follow, which then skip its liveness stream (read by every report of a fleet before). A stall
 * this process marks ends that at once; one another replica marks is seen within this time.
 */
export const REPORTING_TRUST_MS = 1000;
/** Clusters remembered as reporting, at most (an admin may report for any cluster id). */
const REPORTING_CAPACITY = 10_000;

/**
 * The report path's side of the mass-failure guard: a report from a held node ends its
 * cluster's stall. Reads of the cluster's liveness stream are skipped for a cluster found
 * reporting a moment ago.
 */
export class ClusterReports {
  /** Clusters found not stalled, and when (the Clock's ms): see REPORTING_TRUST_MS. */
  private readonly reportingSince = new Map<string, number>();
  /** Stalls this process has marked: a cluster read as reporting before one is not remembered. */
  private stallsMarked = 0;

  constructor(
    /** The cluster's liveness is the clusters slice's: asked of it on its buses. */
    private readonly buses: { readonly commands: CommandBus; readonly queries: QueryBus },
    private readonly clock: Clock,
    /** Told when a stall ends here: the guard's verdict on that cluster is stale. */
    private readonly stallEnded: (clusterId: string) => void,
  ) {}

  /**
   * Whether a report from `clusterId` may end a stall: false while the cluster was found not
   * stalled within the last REPORTING_TRUST_MS, and this process has marked no stall of it since.
   */
  mayBeStalled(clusterId: string): boolean {
    const since = this.reportingSince.get(clusterId);
    return since === undefined || this.clock.now().getTime() - since >= REPORTING_TRUST_MS;
  }

  /** The guard marked a stall of `clusterId` in this process. */
  stallMarked(clusterId: string): void {
    this.stallsMarked++;
    this.reportingSince.delete(clusterId);
  }

  /** Reports arrived from a cluster: a stall of those nodes, if any, is over. */
  async reportsArrived(clusterId: string, nodeIds: string[], ctx: CommandContext): Promise<void> {
    const marked = this.stallsMarked;
    const cluster = await this.buses.queries.execute(new GetClusterLiveness(clusterId));
    if (cluster.state.status !== 'stalled') {
      // Read before a stall this process marked meanwhile: not evidence that it is reporting.
      if (marked !== this.stallsMarked) return;
      if (this.reportingSince.size >= REPORTING_CAPACITY) this.reportingSince.clear();
      this.reportingSince.set(clusterId, this.clock.now().getTime());
      return;
    }
    this.stallEnded(clusterId);
    await this.buses.commands.execute(
      new ResumeClusterReports(
        { clusterId, reportedNodeIds: nodeIds, at: ctx.now.toISOString() },
        { ...ctx, commandId: uuidFrom(ctx.commandId, 'resume', clusterId) },
      ),
    );
  }
}
