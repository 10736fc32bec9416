import { Command, Query } from '@nestjs/cqrs';
import { CommandResult } from '../../../../libs/cqrs/src';
import { CommandContext } from '../../../../libs/kernel/src';
import { CommandData as Data, Loaded } from '../platform/bus/messages';
import { ClusterCommand, ClusterState } from './cluster.decider';
import { ClusterEvent } from './cluster.events';
import { ClusterLivenessCommand, ClusterLivenessState } from './cluster-liveness.decider';
import { ClusterLivenessEvent } from './cluster-liveness.events';

/*
 * What other slices ask of a cluster, on the CommandBus and QueryBus (handlers in
 * clusters.handlers.ts): each command carries its decider command's data and the context it
 * was issued in, and answers the pipeline's result.
 */

export type ClusterResult = CommandResult<ClusterEvent, ClusterState>;
export type ClusterLivenessResult = CommandResult<ClusterLivenessEvent, ClusterLivenessState>;

/** A node registered in a cluster this control plane has not seen: it exists from then on. */
export class AdoptCluster extends Command<ClusterResult> {
  constructor(
    readonly data: Data<ClusterCommand, 'AdoptCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A pool joins its cluster's list (where `last_pool` is decided). */
export class AddPoolToCluster extends Command<ClusterResult> {
  constructor(
    readonly data: Data<ClusterCommand, 'AddPoolToCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** A pool leaves its cluster's list: refused (`last_pool`) for the cluster's last one. */
export class RemovePoolFromCluster extends Command<ClusterResult> {
  constructor(
    readonly data: Data<ClusterCommand, 'RemovePoolFromCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The mass-failure guard holds the cluster's silent nodes (one stall, however often asked). */
export class MarkClusterReportsStalled extends Command<ClusterLivenessResult> {
  constructor(
    readonly data: Data<ClusterLivenessCommand, 'MarkClusterReportsStalled'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** Nodes of the cluster reported: a stall ends when a held node is among them. */
export class ResumeClusterReports extends Command<ClusterLivenessResult> {
  constructor(
    readonly data: Data<ClusterLivenessCommand, 'ResumeClusterReports'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The cluster's lifecycle state as its stream has it now. */
export class GetClusterState extends Query<Loaded<ClusterState>> {
  constructor(readonly clusterId: string) {
    super();
  }
}

/** The cluster's liveness (reporting, or stalled with the nodes held) as its stream has it now. */
export class GetClusterLiveness extends Query<Loaded<ClusterLivenessState>> {
  constructor(readonly clusterId: string) {
    super();
  }
}

/**
 * Opens the operation that follows a cluster's create, upgrade or repair. Handled by the
 * operations slice, which sits above this one: the command is declared here (a port), so
 * clusters ask for it without knowing who carries it out.
 */
export class OpenClusterOperation extends Command<{ operationId: string }> {
  constructor(
    readonly clusterId: string,
    readonly operationType: 'create_cluster' | 'upgrade_cluster' | 'repair_cluster',
    readonly reason: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}
