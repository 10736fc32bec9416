import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { WorkflowRun } from '@fleet/cqrs';
import { CommandContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, LiveMeshesOf, TransitionCluster } from '../clusters';
import { NODES, NodeDoc } from '../nodes';
import { MarkPoolDeleted, NODE_POOLS, PoolDoc } from '../pools';
import { ClusterPoolPlan, Provisioner } from '../provisioner';
import { OperationState } from './operation.decider';
import { OperationInput, OperationOutput, OperationSnapshot } from './operation.workflow';
import { definitionOf } from './pool-operation.effects';

type Running = Extract<OperationState, { operationId: string }>;
type Run = WorkflowRun<OperationInput, OperationSnapshot>;
type Output<T extends OperationOutput['type']> = Extract<OperationOutput, { type: T }>['data'];

/** The cluster operation a run's output acts for. */
const clusterOp = (run: Run): Running => {
  const { op } = run.state;
  if (op.status === 'absent') throw new Error('a cluster output without its operation');
  return op;
};

/**
 * What a cluster operation reads beyond its stream (the cluster's lifecycle; for a deletion
 * its nodes and pools) and the effects its outputs name: the provisioner asked to carry the
 * lifecycle, and a deletion's end (pools deleted, the cluster `deleted`). Each is idempotent.
 */
export class ClusterOperationEffects {
  /** What this process asked the provisioner, per operation (`cluster <action>`). */
  private readonly asked = new Map<string, Set<string>>();

  constructor(
    private readonly deps: {
      readonly readModels: ReadModelStore;
      readonly provisioner: Provisioner;
      readonly commands: CommandBus;
      /** LiveMeshesOf: answered by the mesh slice, above this one. */
      readonly queries: QueryBus;
      readonly context: (operationId: string, commandId: string) => Promise<CommandContext>;
    },
  ) {}

  async snapshot(bare: OperationSnapshot & { op: Running }): Promise<OperationSnapshot> {
    const { op } = bare;
    const { readModels } = this.deps;
    const cluster = await readModels.get<ClusterDoc & Doc>(CLUSTERS, op.clusterId);
    const asked = this.asked.get(op.operationId) ?? new Set<string>();
    const seen = {
      ...bare,
      clusterHistory: cluster ? cluster.history : null,
      asked,
      registered: await this.registered(op),
    };
    if (op.operationType !== 'delete_cluster') return seen;
    const filter = { clusterId: op.clusterId };
    const nodes = await findAll<NodeDoc & Doc>(readModels, NODES, filter);
    const pools = await findAll<PoolDoc & Doc>(readModels, NODE_POOLS, {
      ...filter,
      status: { $ne: 'deleted' },
    });
    return {
      ...seen,
      clusterNodes: nodes.map((n) => ({
        nodeId: n.nodeId,
        hostname: n.hostname,
        poolId: n.poolId,
        online: n.online,
        sessions: n.runningSessions,
      })),
      clusterPools: pools.map((p) => p.poolId),
      liveMeshes: await this.deps.queries.execute(new LiveMeshesOf(op.clusterId)),
    };
  }

  /** Which of the hostnames a create asked for registered in their pools. */
  private async registered(op: Running): Promise<ReadonlySet<string>> {
    const plans = op.clusterPools ?? [];
    const hostnames = plans.flatMap((p) => p.hostnames);
    if (hostnames.length === 0) return new Set();
    const nodes = await findAll<NodeDoc & Doc>(this.deps.readModels, NODES, {
      clusterId: op.clusterId,
      hostname: { $in: hostnames },
    });
    const poolOf = new Map(plans.flatMap((p) => p.hostnames.map((h) => [h, p.poolId] as const)));
    return new Set(nodes.filter((n) => n.poolId === poolOf.get(n.hostname)).map((n) => n.hostname));
  }

  forget(operationId: string): void {
    this.asked.delete(operationId);
  }

  /** Asks the provisioner for the operation's part of the lifecycle, from what state says now. */
  async ask({ action }: Output<'AskProvisioner'>, run: Run): Promise<void> {
    const op = clusterOp(run);
    const { operationId, clusterId } = op;
    const { provisioner, readModels } = this.deps;
    const cluster = await readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!cluster) throw new Error(`cluster ${clusterId}: not in the read model yet`);
    switch (action) {
      case 'create':
        await provisioner.createCluster({
          operationId,
          clusterId,
          name: cluster.name ?? clusterId,
          k8sVersion: cluster.k8sVersion ?? '',
          podCidr: cluster.podCidr ?? '',
          serviceCidr: cluster.serviceCidr ?? '',
          pools: await this.plans(op),
        });
        break;
      case 'upgrade':
        await provisioner.upgradeCluster({
          operationId,
          clusterId,
          k8sVersion: cluster.targetVersion ?? cluster.k8sVersion ?? '',
        });
        break;
      case 'repair':
        await provisioner.repairCluster({ operationId, clusterId, pools: await this.plans(op) });
        break;
      case 'delete': {
        const nodes = await findAll<NodeDoc & Doc>(readModels, NODES, { clusterId });
        await provisioner.deleteCluster({
          operationId,
          clusterId,
          nodes: nodes.map(({ nodeId, hostname, poolId }) => ({ nodeId, hostname, poolId })),
        });
        break;
      }
      default:
        return action satisfies never;
    }
    const set = this.asked.get(operationId) ?? new Set<string>();
    this.asked.set(operationId, set.add(`cluster ${action}`));
  }

  /** The pools of the cluster's create as the provisioner makes them (one gone since is left out). */
  private async plans(op: Running): Promise<ClusterPoolPlan[]> {
    const plans: ClusterPoolPlan[] = [];
    for (const { poolId, hostnames } of op.clusterPools ?? []) {
      const pool = await this.deps.readModels.get<PoolDoc & Doc>(NODE_POOLS, poolId);
      if (pool && pool.status === 'active') plans.push({ pool: definitionOf(pool), hostnames });
    }
    return plans;
  }

  async markPoolsDeleted({ poolIds, at }: Output<'MarkClusterPoolsDeleted'>, run: Run) {
    const { operationId } = clusterOp(run);
    for (const poolId of poolIds) {
      const ctx = await this.deps.context(
        operationId,
        uuidFrom(operationId, 'pool-deleted', poolId),
      );
      await this.deps.commands.execute(new MarkPoolDeleted(poolId, { at }, ctx));
    }
  }

  async markDeleted({ at }: Output<'MarkClusterDeleted'>, run: Run) {
    const { operationId, clusterId } = clusterOp(run);
    const ctx = await this.deps.context(operationId, uuidFrom(operationId, 'cluster-deleted'));
    const reason = 'every node and pool removed';
    await this.deps.commands.execute(
      new TransitionCluster({ clusterId, to: 'deleted', reason, at }, ctx),
    );
  }
}
