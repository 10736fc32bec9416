import { Command, Query } from '@nestjs/cqrs';
import { CommandResult } from '../../../../libs/cqrs/src';
import { CommandContext } from '../../../../libs/kernel/src';
import { CommandData as Data, Loaded } from '../platform/bus/messages';
import { NodeCommand, NodeReport } from './node.decider';
import { NodeEvent, NodeState } from './node.events';
import type { ReportedNode } from './reporting/inventory.service';

/*
 * What other slices ask of a node, on the CommandBus and QueryBus (handlers in
 * nodes.handlers.ts): each command names the node, carries its decider command's data and the
 * context it was issued in.
 */

export type NodeResult = CommandResult<NodeEvent, NodeState>;

/** Placement, step 1: cards (or vCPUs) for a session, on the node's stream (one owner per card). */
export class AllocateOnNode extends Command<NodeResult> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'AllocateOnNode'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The node lets go of a session's cards (a no-op once it holds none for it). */
export class ReleaseNodeCapacity extends Command<NodeResult> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'ReleaseOnNode'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** Marks the node for a drain (cordoned first; one drain per node, the serialisation point). */
export class StartNodeDrain extends Command<NodeResult> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'StartNodeDrain'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The node's side of a drain's end. */
export class EndNodeDrain extends Command<NodeResult> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'EndNodeDrain'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/*
 * The next three answer once the Nodes screen shows what was decided, and name the node in
 * their 404, as the node routes do.
 */

/** Into a pool (or out of any: `poolId` null). */
export class AssignNodeToPool extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'AssignNodeToPool'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A pool operation's last check before the provisioner is asked to remove the node. */
export class RequestNodeRemoval extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'RequestNodeRemoval'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** Deletes an offline node that holds no sessions (`node_busy` otherwise). */
export class DeleteNode extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'DeleteNode'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/**
 * An operator's report of nodes of one cluster (the simulated provisioner's nodes report this
 * way too), through the inventory command path: registered, changed, or nothing at all.
 */
export class ReportInventory extends Command<ReportedNode[]> {
  constructor(
    readonly clusterId: string,
    readonly reports: readonly NodeReport[],
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

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
