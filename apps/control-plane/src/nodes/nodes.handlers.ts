import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { nodeAggregate } from './node.aggregate';
import { nodeStreamId } from './node.events';
import { NodeCommands } from './nodes.commands';
import {
  AllocateOnNode,
  AssignNodeToPool,
  DeleteNode,
  EndNodeDrain,
  GetNodeState,
  ReleaseNodeCapacity,
  RequestNodeRemoval,
  StartNodeDrain,
} from './nodes.messages';

/** Each runs the one command path on the node's stream: load, decide, append. */
abstract class OnNode {
  constructor(@Inject(CommandPipeline) protected readonly pipeline: CommandPipeline) {}
}

@CommandHandler(AllocateOnNode)
export class AllocateOnNodeHandler extends OnNode implements ICommandHandler<AllocateOnNode> {
  execute({ nodeId, data, ctx }: AllocateOnNode) {
    const command = { type: 'AllocateOnNode' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}

@CommandHandler(ReleaseNodeCapacity)
export class ReleaseNodeCapacityHandler
  extends OnNode
  implements ICommandHandler<ReleaseNodeCapacity>
{
  execute({ nodeId, data, ctx }: ReleaseNodeCapacity) {
    const command = { type: 'ReleaseOnNode' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}

@CommandHandler(StartNodeDrain)
export class StartNodeDrainHandler extends OnNode implements ICommandHandler<StartNodeDrain> {
  execute({ nodeId, data, ctx }: StartNodeDrain) {
    const command = { type: 'StartNodeDrain' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}

@CommandHandler(EndNodeDrain)
export class EndNodeDrainHandler extends OnNode implements ICommandHandler<EndNodeDrain> {
  execute({ nodeId, data, ctx }: EndNodeDrain) {
    const command = { type: 'EndNodeDrain' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}

/** The node routes' own path (NodeCommands): answered once the Nodes screen shows it. */
abstract class OnNodeScreen {
  constructor(@Inject(NodeCommands) protected readonly nodes: NodeCommands) {}
}

@CommandHandler(AssignNodeToPool)
export class AssignNodeToPoolHandler
  extends OnNodeScreen
  implements ICommandHandler<AssignNodeToPool>
{
  execute({ nodeId, data, ctx }: AssignNodeToPool) {
    return this.nodes.execute(nodeId, { type: 'AssignNodeToPool', data }, ctx);
  }
}

@CommandHandler(RequestNodeRemoval)
export class RequestNodeRemovalHandler
  extends OnNodeScreen
  implements ICommandHandler<RequestNodeRemoval>
{
  execute({ nodeId, data, ctx }: RequestNodeRemoval) {
    return this.nodes.execute(nodeId, { type: 'RequestNodeRemoval', data }, ctx);
  }
}

@CommandHandler(DeleteNode)
export class DeleteNodeHandler extends OnNodeScreen implements ICommandHandler<DeleteNode> {
  execute({ nodeId, data, ctx }: DeleteNode) {
    return this.nodes.execute(nodeId, { type: 'DeleteNode', data }, ctx);
  }
}

@QueryHandler(GetNodeState)
export class GetNodeStateHandler extends OnNode implements IQueryHandler<GetNodeState> {
  execute({ nodeId, revision }: GetNodeState) {
    const stream = nodeStreamId(nodeId);
    return revision === undefined
      ? this.pipeline.load(nodeAggregate, stream)
      : this.pipeline.loadAt(nodeAggregate, stream, revision);
  }
}

/** ReportInventory's handler is the report path's (reporting/report-inventory.handler.ts). */
export const NODE_HANDLERS = [
  AllocateOnNodeHandler,
  ReleaseNodeCapacityHandler,
  StartNodeDrainHandler,
  EndNodeDrainHandler,
  AssignNodeToPoolHandler,
  RequestNodeRemovalHandler,
  DeleteNodeHandler,
  GetNodeStateHandler,
];
