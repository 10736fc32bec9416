import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { StoredEvent } from '../../../../libs/eventstore/src/port';
import { CommandContext, systemContext } from '../../../../libs/kernel/src';
import { Allocation, GetNodeState, nodeCodec } from '../nodes';
import { PlacementService } from './placement.service';
import { SessionCommand, sessionAggregate } from './session.decider';
import { sessionCodec, sessionStreamId } from './session.events';
import { stepCommandId } from './step-ids';

/** The context of a command a reactor issues: caused by the event, correlated with its command. */
export const reactionContext = (event: StoredEvent, step: string): CommandContext =>
  systemContext(stepCommandId(event.eventId, step), { cause: event });

/**
 * What a node's offline asks of a session it held cards for: end it, if it still runs on the
 * node in the segment that held them. A segment that began after both the offline and those
 * cards' allocation is a new placement (paused meanwhile and resumed here once the node was
 * back), left alone. Both times count: the offline's is the report's receive time, so a
 * placement on the node may carry a later one though it came first in the node's stream.
 */
export const offlineTermination = (
  nodeId: string,
  lastSeenAt: string,
  at: string,
  allocation: Allocation,
): Extract<SessionCommand, { type: 'TerminateSession' }> => ({
  type: 'TerminateSession',
  data: {
    reason: 'node_offline',
    endedAt: lastSeenAt,
    at,
    onlyOnNode: nodeId,
    runningSince:
      allocation.allocatedAt !== undefined && Date.parse(allocation.allocatedAt) > Date.parse(at)
        ? allocation.allocatedAt
        : at,
  },
});

/**
 * Makes the two streams of a placement agree, whatever crashed in between:
 * - cards allocated to a session still queued → start it there (finish step 2);
 * - cards allocated to a session that runs elsewhere, paused or ended → release them (step 3);
 * - a session paused or terminated → release its node's cards;
 * - a node gone offline → terminate its running sessions (`node_offline`, billed to the last report).
 */
@Injectable()
export class SessionProcessReactor {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(PlacementService) private readonly placement: PlacementService,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('node-')) return this.onNodeEvent(stored);
    if (stored.streamId.startsWith('session-')) return this.onSessionEvent(stored);
  }

  private async onNodeEvent(stored: StoredEvent): Promise<void> {
    const event = nodeCodec.decode(stored.type, stored.data);
    if (event?.type === 'NodeCapacityAllocated') {
      const { nodeId, sessionId } = event.data;
      // Placed by a request in this process: let it finish its step 2 first, then look. Otherwise
      // both would start the session (one of them a no-op), and a failure (it throws) is still
      // caught here, with the streams as that placement left them.
      const placed = await this.placement.pending(sessionId)?.catch(() => undefined);
      if (
        placed?.status === 'running' &&
        placed.placement.nodeId === nodeId &&
        placed.placement.gpus.join() === event.data.gpus.join()
      ) {
        return; // step 2 done on these very cards: the streams agree
      }
      const node = (await this.queries.execute(new GetNodeState(nodeId))).state;
      if (node.status !== 'online' && node.status !== 'offline') return;
      const allocation = node.allocations[sessionId];
      if (!allocation || allocation.gpus.join() !== event.data.gpus.join()) return; // released since
      const session = (await this.pipeline.load(sessionAggregate, sessionStreamId(sessionId)))
        .state;
      const ctx = reactionContext(stored, 'finish-placement');
      if (session.status === 'queued') {
        await this.placement.start(session, { nodeId, hostname: node.hostname }, allocation, ctx);
      } else if (session.status !== 'running' || session.placement.nodeId !== nodeId) {
        await this.placement.release(nodeId, sessionId, ctx);
      }
      return;
    }
    if (event?.type === 'NodeWentOffline') {
      const { nodeId, lastSeenAt } = event.data;
      // The sessions on the node when it went offline, not now: handled late (a replay after a
      // crash, a lagging reactor), the node may be back with sessions placed since, which
      // this offline must not end.
      // Usually the offline is still the stream's head (the cached state); else folded to it.
      const node = (await this.queries.execute(new GetNodeState(nodeId, stored.revision))).state;
      if (node.status !== 'online' && node.status !== 'offline') return;
      for (const [sessionId, allocation] of Object.entries(node.allocations)) {
        const ctx = reactionContext(stored, `offline-${sessionId}`);
        const { state } = await this.pipeline.handle(
          sessionAggregate,
          sessionStreamId(sessionId),
          offlineTermination(nodeId, lastSeenAt, event.data.at, allocation),
          ctx,
        );
        // Still running there: placed again once the node was back, on cards of its own now.
        if (state.status === 'running' && state.placement.nodeId === nodeId) continue;
        await this.placement.release(nodeId, sessionId, ctx);
      }
    }
  }

  private async onSessionEvent(stored: StoredEvent): Promise<void> {
    const event = sessionCodec.decode(stored.type, stored.data);
    if (event?.type !== 'SessionPaused' && event?.type !== 'SessionTerminated') return;
    // The node the segment ended on: the session as it was at this event, not as it is now.
    const then = (await this.pipeline.loadAt(sessionAggregate, stored.streamId, stored.revision))
      .state;
    if (then.status === 'absent' || !then.lastPlacement) return;
    const nodeId = then.lastPlacement.nodeId;
    // Handled late, after the session was placed again on the same node: those cards are its new ones.
    const now = (await this.pipeline.load(sessionAggregate, stored.streamId)).state;
    if (now.status === 'running' && now.placement.nodeId === nodeId) return;
    // Released only if the node still holds it for this session (idempotent on the node stream).
    await this.placement.release(nodeId, then.sessionId, reactionContext(stored, 'release'));
  }
}
