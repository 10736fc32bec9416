import { Inject, Injectable, Logger } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandContext, DomainError, systemContext, newId } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { SESSIONS, SessionDoc } from '../sessions';
import { READ_MODELS } from '../platform/runtime/tokens';
import { GetClusterState, WORKING_CLUSTER_STATUSES } from '../clusters';
import {
  AUTOSCALE_DEFAULTS,
  GetPoolState,
  ListPoolMembers,
  NODE_POOLS,
  PoolDoc,
  autoscalingOn,
} from '../pools';
import { autoscaleDecision, boundsDecision, fitsOneNode } from './autoscale';
import { OperationsService } from './operations.service';

/** How often the autoscaler decides (once per period across processes sharing Redis). */
export const AUTOSCALER_TICK_MS = 1000;

/**
 * The autoscaler: every tick, for each pool with autoscaling and no running operation, a pure
 * decision (autoscaleDecision) from the queue and the pool's idle nodes; each decision is a
 * scale operation carrying its reason. Idle times are watched in memory: a restart restarts
 * every cool-down, which can only delay a scale-in. With several processes each tick runs in
 * one of them, so a process sees a node only now and then: a node counts as idle since this
 * process first saw it ready at its current revision (any event of its stream, a session
 * placed or ended on it included, starts the watch again).
 */
@Injectable()
export class AutoscalerService {
  private readonly logger = new Logger('autoscaler');
  private readonly idleSince = new Map<string, { readonly since: number; readonly rev: number }>();
  private ticking = false;

  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(OperationsService) private readonly operations: OperationsService,
  ) {}

  /** `leaderEpoch`: the lease term of the leader running the tick, recorded on its commands. */
  async tick(now = Date.now(), leaderEpoch?: number): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const pools = await findAll<PoolDoc & Doc>(
        this.readModels,
        NODE_POOLS,
        { status: 'active', autoscaling: { $ne: null } },
        { poolId: 1 },
      );
      const queued = await findAll<SessionDoc & Doc>(this.readModels, SESSIONS, {
        status: 'queued',
      });
      const claimed = new Set<string>();
      for (const pool of pools) {
        if (!autoscalingOn(pool.autoscaling)) continue;
        // A cluster not running takes no pool changes, the autoscaler's included.
        if (!(await this.clusterWorking(pool.clusterId))) continue;
        const settings = { ...AUTOSCALE_DEFAULTS, ...pool.autoscaling! };
        const tenants = pool.access.tenants;
        const waiting = queued.filter(
          (s) =>
            !claimed.has(s.sessionId) &&
            (s.poolId === null || s.poolId === pool.poolId) &&
            (tenants.length === 0 || tenants.includes(s.owner)) &&
            s.queuedAt !== null &&
            now - Date.parse(s.queuedAt) >= settings.queueWaitSec * 1000 &&
            fitsOneNode(pool, s.demand),
        );
        // A session counts towards one pool only, so two pools do not both grow for it.
        waiting.forEach((s) => claimed.add(s.sessionId));
        const members = await this.queries.execute(new ListPoolMembers(pool.poolId));
        let idleNodes = 0;
        for (const node of members) {
          if (node.status !== 'ready') {
            this.idleSince.delete(node.nodeId);
            continue;
          }
          const seen = this.idleSince.get(node.nodeId);
          // Busy and idle again between two of this process's ticks: its revision moved.
          const since = seen?.rev === node._rev ? seen.since : now;
          this.idleSince.set(node.nodeId, { since, rev: node._rev });
          if (now - since >= settings.idleCooldownSec * 1000) idleNodes++;
        }
        if (pool.operation !== null) continue;
        const decision = autoscaleDecision({
          pool: { ...pool, autoscaling: settings },
          size: members.length,
          waiting: waiting.map((s) => s.demand),
          idleNodes,
        });
        if (!decision) continue;
        try {
          const { operationId } = await this.operations.scale(
            pool.poolId,
            decision.desiredSize,
            this.context(leaderEpoch),
            decision.reason,
          );
          this.logger.log(`pool ${pool.name}: ${decision.reason} → operation ${operationId}`);
        } catch (error) {
          // Another operation started meanwhile: the next tick decides again.
          if (!(error instanceof DomainError)) throw error;
        }
      }
    } catch (error) {
      this.logger.warn(`autoscaler tick failed: ${String(error)}`);
    } finally {
      this.ticking = false;
    }
  }

  /**
   * A PATCH of the pool's autoscaling: its new bounds hold at once (out to min, in to max,
   * through the usual scale operation and its drains). Null when within them, autoscaling is
   * off, or another operation runs (the next tick decides again once it ends).
   */
  async enforceBounds(
    poolId: string,
    ctx: CommandContext,
  ): Promise<{ operationId: string } | null> {
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    if (pool.status !== 'active' || pool.operationId !== null) return null;
    if (!autoscalingOn(pool.autoscaling)) return null;
    const members = await this.queries.execute(new ListPoolMembers(poolId));
    const decision = boundsDecision(members.length, pool.autoscaling);
    if (!decision) return null;
    try {
      return await this.operations.scale(poolId, decision.desiredSize, ctx, decision.reason);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'operation_in_progress') return null;
      throw error;
    }
  }

  private async clusterWorking(clusterId: string): Promise<boolean> {
    const { state } = await this.queries.execute(new GetClusterState(clusterId));
    // Unknown: a cluster adopted from reports a moment ago (adopted clusters run).
    return state.status === 'absent' || WORKING_CLUSTER_STATUSES.includes(state.status);
  }

  private context(leaderEpoch?: number): CommandContext {
    return systemContext(newId(), { leaderEpoch });
  }
}
