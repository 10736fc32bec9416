import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../../../libs/kernel/src';
import type { DrainMode } from '../nodes';

/**
 * Drains a node: marks it (cordoned first; one drain per node), opens the drain and kicks its
 * first step; answers the drain's id (the running drain's, for a node draining already).
 * `inPool`: a pool operation's drain, refused (`node_in_use`) once the node left that pool.
 * Handled in drains.handlers.ts.
 */
export class DrainNode extends Command<string> {
  constructor(
    readonly nodeId: string,
    readonly mode: DrainMode,
    readonly ctx: CommandContext,
    readonly inPool?: string,
  ) {
    super();
  }
}
