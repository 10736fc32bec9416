import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Clock, CommandContext, assertNever, systemClock, systemContext } from '@fleet/kernel';
import { GetNodeState, nodeCodec } from '../nodes';
import { CLOCK } from '../platform/runtime/tokens';
import { PlacementService } from './placement.service';
import {
  SessionProcessInput,
  SessionProcessOutput,
  decideSessionProcess,
} from './session-process.workflow';
import { sessionAggregate } from './session.decider';
import { sessionCodec, sessionStreamId } from './session.events';
import { stepCommandId } from './step-ids';

/** The context of a command a reactor issues: caused by the event, correlated with its command. */
export const reactionContext = (event: StoredEvent, step: string, now: Date): CommandContext =>
  systemContext(stepCommandId(event.eventId, step), { cause: event, now });

/** The context of the reaction's command for a step (its id derives from the event and the step). */
type StepContext = (step: string) => CommandContext;

/**
 * Runs the placement process (session-process.workflow.ts) on the log: reads the streams an
 * event's decision needs, decides, and carries the commands out, each caused by the event.
 */
@Injectable()
export class SessionProcessReactor {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(PlacementService) private readonly placement: PlacementService,
    /** Nodes are the nodes slice's: their states are asked of it. */
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(CLOCK) private readonly clock: Clock = systemClock,
  ) {}

  async react(stored: StoredEvent): Promise<void> {
    const input = await this.inputOf(stored);
    // One context per step, its time read when first needed (after the reads it follows).
    const contexts = new Map<string, CommandContext>();
    const ctx = (step: string): CommandContext => {
      const made = contexts.get(step) ?? reactionContext(stored, step, this.clock.now());
      contexts.set(step, made);
      return made;
    };
    if (input) await this.decideAndCarry(input, ctx);
  }

  /** The event as the workflow's input, with the streams as it needs them; null: not its concern. */
  private async inputOf(stored: StoredEvent): Promise<SessionProcessInput | null> {
    if (stored.streamId.startsWith('node-')) {
      const event = nodeCodec.decode(stored.type, stored.data);
      if (event?.type === 'NodeCapacityAllocated') {
        const { nodeId, sessionId, gpus } = event.data;
        // Placed by a request in this process: let it finish its step 2 first, then look. Otherwise
        // both would start the session (one of them a no-op), and a failure (it throws) is still
        // caught here, with the streams as that placement left them.
        const placedHere = (await this.placement.pending(sessionId)?.catch(() => null)) ?? null;
        return { type: 'CardsAllocated', data: { nodeId, sessionId, gpus, placedHere } };
      }
      if (event?.type === 'NodeWentOffline') {
        // Usually the offline is still the stream's head (the cached state); else folded to it.
        const { nodeId, lastSeenAt, at } = event.data;
        const node = await this.queries.execute(new GetNodeState(nodeId, stored.revision));
        return { type: 'NodeWentOffline', data: { nodeId, lastSeenAt, at, node: node.state } };
      }
      return null;
    }
    if (stored.streamId.startsWith('session-')) {
      const event = sessionCodec.decode(stored.type, stored.data);
      if (event?.type !== 'SessionPaused' && event?.type !== 'SessionTerminated') return null;
      const then = await this.pipeline.loadAt(sessionAggregate, stored.streamId, stored.revision);
      const now = await this.pipeline.load(sessionAggregate, stored.streamId);
      return { type: 'SegmentEnded', data: { then: then.state, now: now.state } };
    }
    return null;
  }

  private async decideAndCarry(input: SessionProcessInput, ctx: StepContext): Promise<void> {
    for (const output of decideSessionProcess(input)) {
      const next = await this.carry(output, ctx);
      if (next) await this.decideAndCarry(next, ctx);
    }
  }

  /** Carries one output out; returns what came of it when the workflow decides on that too. */
  private async carry(
    output: SessionProcessOutput,
    ctx: StepContext,
  ): Promise<SessionProcessInput | null> {
    switch (output.type) {
      case 'ReadAllocationStreams': {
        const { nodeId, sessionId } = output.data;
        const node = await this.queries.execute(new GetNodeState(nodeId));
        const session = await this.pipeline.load(sessionAggregate, sessionStreamId(sessionId));
        const data = { ...output.data, node: node.state, session: session.state };
        return { type: 'AllocationStreamsRead', data };
      }
      case 'StartPlacedSession': {
        const { session, node, allocation, step } = output.data;
        await this.placement.start(session, node, allocation, ctx(step));
        return null;
      }
      case 'ReleaseCards':
        await this.placement.release(
          output.data.nodeId,
          output.data.sessionId,
          ctx(output.data.step),
        );
        return null;
      case 'EndSessionOnOfflineNode': {
        const { nodeId, sessionId, command, step } = output.data;
        const stream = sessionStreamId(sessionId);
        const { state } = await this.pipeline.handle(sessionAggregate, stream, command, ctx(step));
        return { type: 'OfflineTerminationDone', data: { nodeId, sessionId, session: state } };
      }
      default:
        return assertNever(output, 'session process output');
    }
  }
}
