import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { armWithin } from '@fleet/jobs/port';
import { CommandContext, DomainError, notFound, uuidFrom } from '@fleet/kernel';
import { DrainMode, GetNodeState, StartNodeDrain } from '../nodes';
import { GetSessionState } from '../sessions';
import { DrainSaga } from './drain.saga';
import { drainAggregate, drainStreamId } from './drain.workflow';

/** How long a request waits for the job queue to arm recorded work (Redis may be down). */
const ARM_WAIT_MS = 2000;

@Injectable()
export class DrainsService {
  private readonly logger = new Logger('drains');
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(DrainSaga) private readonly saga: DrainSaga,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /**
   * Marks the node (the serialisation point: one drain per node), opens the drain's stream and
   * kicks its first step. Draining a draining node returns the running drain's id.
   */
  async start(
    nodeId: string,
    mode: DrainMode,
    ctx: CommandContext,
    /** A pool operation's drain: the node must still be in this pool (node_in_use otherwise). */
    inPool?: string,
  ): Promise<string> {
    const before = (await this.queries.execute(new GetNodeState(nodeId))).state;
    if (before.status === 'absent' || before.status === 'deleted') throw notFound('node', nodeId);
    if (before.drainId) return before.drainId;
    const drainId = uuidFrom('drain', ctx.commandId);
    const at = ctx.now.toISOString();
    try {
      await this.commands.execute(
        new StartNodeDrain(nodeId, { drainId, mode, at, ...(inPool && { inPool }) }, ctx),
      );
    } catch (error) {
      const now = (await this.queries.execute(new GetNodeState(nodeId))).state;
      // Lost a race with another drain request: that drain is the node's drain.
      if (
        error instanceof DomainError &&
        (now.status === 'online' || now.status === 'offline') &&
        now.drainId
      )
        return now.drainId;
      throw error;
    }
    const started = await this.pipeline.handle(
      drainAggregate,
      drainStreamId(drainId),
      { type: 'StartDrain', data: { drainId, nodeId, mode, correlationId: ctx.correlationId, at } },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'start-drain') },
    );
    // Recorded: with Redis out of reach the drain starts once it is back (the saga's repair
    // re-arms a running drain without a job), and the request does not wait for it.
    await armWithin(this.saga.schedule(drainId), ARM_WAIT_MS, (error) =>
      this.logger.warn(`drain ${drainId}: first step not armed yet (${String(error)})`),
    );
    await this.runner.settle(started.position, ['projection:drains', 'projection:nodes']);
    return drainId;
  }

  /** The running sessions, owners and cards a drain of this node would touch. */
  async preview(nodeId: string) {
    const node = (await this.queries.execute(new GetNodeState(nodeId))).state;
    if (node.status !== 'online' && node.status !== 'offline') throw notFound('node', nodeId);
    const sessions = await Promise.all(
      Object.values(node.allocations).map(async (a) => {
        const s = (await this.queries.execute(new GetSessionState(a.sessionId))).state;
        return {
          sessionId: a.sessionId,
          owner: a.owner,
          status: s.status === 'absent' ? 'running' : s.status,
          gpus: [...a.gpus],
        };
      }),
    );
    return { nodeId, sessions };
  }
}
