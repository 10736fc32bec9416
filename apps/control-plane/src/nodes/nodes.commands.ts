import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, CommandResult, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound } from '@fleet/kernel';
import { NodeCommand } from './node.decider';
import { nodeAggregate } from './node.aggregate';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';

export const NODES_PROJECTION = 'projection:nodes';
const NODES_ONLY: readonly string[] = [NODES_PROJECTION];

/**
 * A command on one node, as the node slice's handlers run it (cordon-node.handler.ts, ...):
 * load, decide, append (the pipeline); then wait for the Nodes screen to show it.
 */
@Injectable()
export class NodeCommands {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
  ) {}

  async execute(nodeId: string, command: NodeCommand, ctx: CommandContext): Promise<void> {
    let result: CommandResult<NodeEvent, NodeState>;
    try {
      result = await this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
    } catch (error) {
      // The decider refuses a node that does not exist without knowing its id (commands
      // carry none): name it here, as every other route's 404 does.
      throw error instanceof DomainError && error.code === 'not_found'
        ? notFound('node', nodeId)
        : error;
    }
    if (result.revision === null) throw notFound('node', nodeId);
    // What was decided on, appended now or by an earlier request (a drain's cordon, seen by a
    // cordon that then changed nothing): the answer is read once the Nodes screen shows it.
    if (!this.runner.reachedNow(result.headPosition, NODES_ONLY)) {
      await this.runner.settle(result.headPosition, NODES_ONLY);
    }
  }
}
