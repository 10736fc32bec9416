import { Command, Query } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { Loaded } from '../platform/bus/messages';
import type { OperationState } from './operation.decider';

/**
 * A restore of `backupId` onto `clusterId` as an operation the backups slice carries out:
 * 409 operation_in_progress while another restore of that cluster is pending or running.
 */
export class OpenRestoreOperation extends Command<{ operationId: string }> {
  constructor(
    readonly clusterId: string,
    readonly backupId: string,
    readonly reason: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/**
 * A mesh link's operation (`connect_mesh` or `disconnect_mesh`) on the request's `from`
 * cluster, its one step started at once. Its id follows from the context's command id, so the
 * link process opens it again harmlessly after a restart.
 */
export class OpenMeshOperation extends Command<{ operationId: string }> {
  constructor(
    readonly clusterId: string,
    readonly operationType: 'connect_mesh' | 'disconnect_mesh',
    readonly reason: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A step of an operation another slice carries out: started, or completed with a detail. */
export class ReportOperationStep extends Command<void> {
  constructor(
    readonly operationId: string,
    readonly name: string,
    readonly progress:
      { readonly completed: false } | { readonly completed: true; readonly detail: string | null },
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The end of an operation another slice carries out: succeeded, or failed with the error. */
export class EndOperation extends Command<void> {
  constructor(
    readonly operationId: string,
    readonly error: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** An operation's state as its stream has it now. */
export class GetOperationState extends Query<Loaded<OperationState>> {
  constructor(readonly operationId: string) {
    super();
  }
}
