import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Loaded } from '../platform/bus/messages';
import { nodeAggregate } from './node.aggregate';
import { NodeState, nodeStreamId } from './node.events';

/**
 * The node's state as its stream has it now, or as of `revision` (a reaction to an event
 * handled late decides on the node as it was at that event).
 */
export class GetNodeState extends Query<Loaded<NodeState>> {
  constructor(
    readonly nodeId: string,
    readonly revision?: number,
  ) {
    super();
  }
}

@QueryHandler(GetNodeState)
export class GetNodeStateHandler implements IQueryHandler<GetNodeState> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ nodeId, revision }: GetNodeState) {
    const stream = nodeStreamId(nodeId);
    return revision === undefined
      ? this.pipeline.load(nodeAggregate, stream)
      : this.pipeline.loadAt(nodeAggregate, stream, revision);
  }
}
