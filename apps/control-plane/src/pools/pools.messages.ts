import { Command, Query } from '@nestjs/cqrs';
import { CommandResult } from '../../../../libs/cqrs/src';
import { CommandContext } from '../../../../libs/kernel/src';
import type { NodeDoc, NodeView } from '../nodes';
import { CommandData as Data, Loaded } from '../platform/bus/messages';
import { PoolCommand, PoolState } from './pool.decider';
import { PoolEvent } from './pool.events';

/*
 * What other slices ask of a pool, on the CommandBus and QueryBus (handlers in
 * pools.handlers.ts): each command names the pool, carries its decider command's data and the
 * context it was issued in.
 */

export type PoolResult = CommandResult<PoolEvent, PoolState>;

/** Locks the pool for a long operation: one at a time (`operation_in_progress`). */
export class BeginPoolOperation extends Command<PoolResult> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'BeginPoolOperation'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** Unlocks the pool (a no-op unless this operation holds it). */
export class EndPoolOperation extends Command<PoolResult> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'EndPoolOperation'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A delete operation's last step. */
export class MarkPoolDeleted extends Command<PoolResult> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'MarkPoolDeleted'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A resize operation's last step: the pool's nodes have the new shape. */
export class ChangePoolSpec extends Command<PoolResult> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'ChangePoolSpec'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/**
 * A node into a pool, checked against the pool (active, same cluster, kind and GPU model) and
 * then assigned on the node's stream, as `PUT /v1/nodes/{id}/pool` does; answers the node's view.
 */
export class AddNodeToPool extends Command<NodeView> {
  constructor(
    readonly nodeId: string,
    readonly poolId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The pool as its stream has it now. */
export class GetPoolState extends Query<Loaded<PoolState>> {
  constructor(readonly poolId: string) {
    super();
  }
}

/** Every node of the pool on the Nodes screen, by hostname (deleted nodes are gone from it). */
export class ListPoolMembers extends Query<NodeDoc[]> {
  constructor(readonly poolId: string) {
    super();
  }
}
