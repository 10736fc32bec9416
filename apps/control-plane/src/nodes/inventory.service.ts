import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, CommandResult } from '../../../../libs/cqrs/src';
import { CommandContext, uuidFrom } from '../../../../libs/kernel/src';
import { LivenessService } from './liveness.service';
import { HEARTBEATS } from './heartbeat/heartbeat.module';
import { Beat, HeartbeatStore } from './heartbeat/heartbeat.store';
import { NodeCommand, NodeReport, displayStatus, isOutOfOrder } from './node.decider';
import { nodeAggregate, nodeRefOf } from './node.aggregate';
import { NodeEvent, NodeState } from './node.events';

export type ReportedNode = {
  hostname: string;
  nodeId: string;
  status: 'ready' | 'busy' | 'cordoned' | 'offline';
  desired: { unschedulable: boolean };
};

const toIso = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/**
 * ReportInventory: each node of a report is upserted by (cluster, hostname). Changes append
 * events; a report that changes nothing only refreshes the heartbeat store: no event, and
 * nothing written to the job queue.
 */
@Injectable()
export class InventoryService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(LivenessService) private readonly liveness: LivenessService,
  ) {}

  async report(
    clusterId: string,
    reports: readonly NodeReport[],
    ctx: CommandContext,
  ): Promise<ReportedNode[]> {
    const receivedAt = ctx.now.toISOString();
    const refs = reports.map((r) => nodeRefOf(clusterId, r.hostname));
    const nodeIds = refs.map((ref) => ref.nodeId);
    const beats = await this.heartbeats.get(nodeIds);
    const newest = beats.map((b) => toIso(b?.observedAt ?? null));
    const commands: NodeCommand[] = reports.map((report, i) => ({
      type: 'ReportNode',
      data: { nodeId: nodeIds[i], report, receivedAt, newestObservedAt: newest[i] },
    }));
    const streamIds = refs.map((ref) => ref.streamId);
    // The common report changes nothing: decided in one pass on the cached states, without a
    // queued command per node. Whatever would append (or is not cached) takes the pipeline.
    const noops = await this.pipeline.decideNoops(nodeAggregate, streamIds, commands);
    const fresh: Beat[] = [];
    const results: ReportedNode[] = new Array<ReportedNode>(reports.length);
    const settle = (i: number, result: CommandResult<NodeEvent, NodeState>): void => {
      const report = reports[i];
      const nodeId = nodeIds[i];
      if (!isOutOfOrder(report, result.state, newest[i]) || result.appended) {
        const observed = report.observedAt
          ? Date.parse(report.observedAt)
          : (beats[i]?.observedAt ?? null);
        fresh.push({ nodeId, seenAt: ctx.now.getTime(), observedAt: observed });
      }
      const state = result.state;
      results[i] = {
        hostname: report.hostname,
        nodeId,
        status: displayStatus(state) ?? 'offline',
        desired: {
          unschedulable:
            state.status === 'online' || state.status === 'offline' ? state.cordon.desired : false,
        },
      };
    };
    // No promise per no-op node: only the nodes that take the pipeline are awaited.
    const handled: Array<Promise<void>> = [];
    for (let i = 0; i < reports.length; i++) {
      const noop = noops[i];
      if (noop !== undefined) {
        settle(i, noop);
        continue;
      }
      handled.push(
        this.pipeline
          .handle(
            nodeAggregate,
            streamIds[i],
            commands[i],
            // One command per node, its id derived from the request's, so a replayed report appends nothing.
            { ...ctx, commandId: uuidFrom(ctx.commandId, nodeIds[i]) },
          )
          .then((result) => settle(i, result)),
      );
    }
    await Promise.all(handled);
    await this.heartbeats.touch(fresh);
    await this.liveness.reportsArrived(clusterId, nodeIds, ctx);
    return results;
  }
}
