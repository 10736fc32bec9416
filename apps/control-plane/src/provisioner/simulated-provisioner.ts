import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandContext, systemContext, newId, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config, SimulatedFailure } from '../config/config';
import { CLUSTERS, ClusterDoc, GetClusterState, TransitionCluster } from '../clusters';
import {
  GetNodeState,
  NODES,
  NodeDoc,
  NodeReport,
  POOL_LABEL,
  PROVISIONER_LABEL,
  ReportInventory,
  nodeIdOf,
} from '../nodes';
import { GPU_CATALOG } from '../catalog/catalog';
import { AssignNodeToPool } from '../pools';
import { CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { CreateNodesRequest, Provisioner, RemoveNodesRequest } from './provisioner.port';
import {
  ClusterPoolPlan,
  CreateClusterRequest,
  DeleteClusterRequest,
  RepairClusterRequest,
  UpgradeClusterRequest,
} from './cluster-provisioner.port';
import {
  nextSimulatedMove,
  simulatedCaCertificate,
  simulatedEndpoint,
} from './simulated-lifecycle';

const SIMULATED = 'simulated';

/** One cluster carried along: its pools to make, and whether a repair asked (failed, degraded move on). */
type Drive = { pools: readonly ClusterPoolPlan[]; repair: boolean };

const context = (commandId: string, correlationId = commandId): CommandContext =>
  systemContext(commandId, { correlationId });

/**
 * The in-process provisioner (PROVISIONER_URL unset): the nodes it "creates" report exactly as
 * an operator would (through the inventory command path, labelled with their pool) and keep
 * reporting every third of the stale window; removing one makes it report NotReady and stop.
 */
@Injectable()
export class SimulatedProvisioner implements Provisioner, OnModuleDestroy {
  private readonly logger = new Logger('provisioner');
  private readonly removing = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private beating = false;
  /** Clusters being carried along their lifecycle in this process (one driver each). */
  private readonly driving = new Map<string, Drive>();
  /** Failures asked for by tests (failNext), each taken by the next cluster reaching its step. */
  private readonly failures: SimulatedFailure[] = [];
  private stopped = false;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /** Starts the heartbeat of every simulated node (found again from the read model after a restart). */
  start(): void {
    const every = Math.min(15_000, Math.max(1000, (this.config.nodeStaleSec * 1000) / 3));
    this.timer = setInterval(() => void this.beat(), every);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  /** For tests: the next cluster to reach `step` fails there (once; SIM_PROVISION_FAIL in child apps). */
  failNext(step: SimulatedFailure): void {
    this.failures.push(step);
  }

  createCluster(request: CreateClusterRequest): Promise<void> {
    this.drive(request.clusterId, request.operationId, { pools: request.pools, repair: false });
    return Promise.resolve();
  }

  upgradeCluster(request: UpgradeClusterRequest): Promise<void> {
    this.drive(request.clusterId, request.operationId, { pools: [], repair: false });
    return Promise.resolve();
  }

  repairCluster(request: RepairClusterRequest): Promise<void> {
    this.drive(request.clusterId, request.operationId, { pools: request.pools, repair: true });
    return Promise.resolve();
  }

  /** Every node reports NotReady and stops (offline at once); the operation deletes them. */
  async deleteCluster(request: DeleteClusterRequest): Promise<void> {
    const { operationId, clusterId, nodes } = request;
    await this.removeNodes({ operationId, clusterId, poolId: '', nodes });
  }

  /**
   * Carries the cluster from where it stands to running, a step every third of
   * SIM_PROVISION_SEC, through TransitionCluster as an HTTP provisioner's callbacks would;
   * once it runs, its pools' nodes report (after the move: pool changes need a running
   * cluster, and the operation waits for them). A request arriving while it runs adds
   * nothing; asked again, it continues from the cluster's state (after a restart the
   * operation asks again and this starts over).
   */
  private drive(clusterId: string, operationId: string, job: Drive): void {
    const known = this.driving.get(clusterId);
    if (known) {
      if (job.pools.length > 0) known.pools = job.pools;
      known.repair ||= job.repair;
      return;
    }
    this.driving.set(clusterId, job);
    void this.carry(clusterId, operationId, job)
      .catch((error) =>
        this.logger.warn(`simulated lifecycle of cluster ${clusterId} stopped: ${String(error)}`),
      )
      .finally(() => this.driving.delete(clusterId));
  }

  private async carry(clusterId: string, operationId: string, job: Drive): Promise<void> {
    const stepMs = (this.config.simProvisionSec * 1000) / 3;
    for (;;) {
      if (this.stopped) return;
      const { state } = await this.queries.execute(new GetClusterState(clusterId));
      if (state.status === 'absent') return;
      // Running: its pools' nodes come up (again, after a restart: each report is idempotent).
      if (state.status === 'running') return this.makeNodes(operationId, job.pools);
      // A failed or degraded cluster waits for a repair to ask.
      if ((state.status === 'failed' || state.status === 'degraded') && !job.repair) return;
      const move = nextSimulatedMove(state, await this.failureAt(clusterId, state.status));
      if (!move) return;
      await new Promise((resolve) => setTimeout(resolve, stepMs).unref());
      if (this.stopped) return;
      const asked = this.failures.indexOf(move.from as SimulatedFailure);
      if (move.to === 'failed' && asked >= 0) this.failures.splice(asked, 1); // taken once
      const endpoint = move.bootstraps
        ? {
            apiEndpoint: simulatedEndpoint(clusterId),
            caCertificate: simulatedCaCertificate(clusterId),
          }
        : {};
      const ctx = context(uuidFrom(operationId, 'simulated-move', move.from, move.to), operationId);
      const { to, reason } = move;
      await this.commands.execute(
        new TransitionCluster(
          { clusterId, to, reason, ...endpoint, at: ctx.now.toISOString() },
          ctx,
        ),
      );
      if (to === 'failed') return;
    }
  }

  /** The step to fail here: one failNext asked for, else SIM_PROVISION_FAIL unless it failed once. */
  private async failureAt(clusterId: string, status: string): Promise<SimulatedFailure | null> {
    const asked = this.failures.find((f) => f === status);
    if (asked) return asked;
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    const failedBefore = doc?.history.some((h) => h.to === 'failed') ?? false;
    return failedBefore ? null : (this.config.simProvisionFail ?? null);
  }

  private async makeNodes(operationId: string, pools: readonly ClusterPoolPlan[]) {
    for (const { pool, hostnames } of pools)
      await this.createNodes({ operationId, pool, hostnames });
  }

  async createNodes(request: CreateNodesRequest): Promise<void> {
    const { pool, hostnames, operationId } = request;
    const card = pool.gpuType ? GPU_CATALOG[pool.gpuType] : null;
    for (const hostname of hostnames) {
      const report: NodeReport = {
        clusterId: pool.clusterId,
        hostname,
        role: pool.kind,
        labels: {
          'fleet/mode': pool.mode,
          [POOL_LABEL]: pool.poolId,
          [PROVISIONER_LABEL]: SIMULATED,
        },
        capacity: {
          cpu: pool.spec.cpu,
          memoryGiB: pool.spec.memoryGiB,
          diskGiB: pool.spec.diskGiB,
        },
        gpus:
          card && pool.gpuType
            ? Array.from({ length: pool.spec.gpusPerNode }, (_, i) => ({
                uuid: `GPU-${hostname}-${i}`,
                model: pool.gpuType!,
                memoryGiB: card.cardGiB,
              }))
            : [],
        kubeletReady: true,
        unschedulable: false,
        observedAt: null,
      };
      const ctx = context(uuidFrom(operationId, 'simulated-create', hostname), operationId);
      await this.commands.execute(new ReportInventory(pool.clusterId, [report], ctx));
      await this.commands.execute(
        new AssignNodeToPool(nodeIdOf(pool.clusterId, hostname), pool.poolId, {
          ...ctx,
          commandId: uuidFrom(operationId, 'simulated-assign', hostname),
        }),
      );
    }
  }

  async removeNodes(request: RemoveNodesRequest): Promise<void> {
    for (const { nodeId } of request.nodes) {
      this.removing.add(nodeId);
      const { state } = await this.queries.execute(new GetNodeState(nodeId));
      if (state.status !== 'online') continue; // already offline or gone
      await this.commands.execute(
        new ReportInventory(
          state.clusterId,
          [{ ...this.reportOf(state), kubeletReady: false }],
          context(uuidFrom(request.operationId, 'simulated-remove', nodeId), request.operationId),
        ),
      );
    }
  }

  private reportOf(
    node: Pick<NodeDoc, 'clusterId' | 'hostname' | 'role' | 'labels' | 'capacity'> & {
      gpus: ReadonlyArray<{ uuid: string; model: string; memoryGiB: number }>;
      cordon: { desired: boolean };
    },
  ): NodeReport {
    return {
      clusterId: node.clusterId,
      hostname: node.hostname,
      role: node.role,
      labels: node.labels,
      capacity: node.capacity,
      gpus: node.gpus.map((g) => ({
        uuid: g.uuid,
        model: g.model as NodeReport['gpus'][number]['model'],
        memoryGiB: g.memoryGiB,
      })),
      kubeletReady: true,
      // Like a real operator: it applies the desired cordon and reports it back.
      unschedulable: node.cordon.desired,
      observedAt: null,
    };
  }

  /**
   * One heartbeat round: every simulated node that exists reports what it is, as a kubelet
   * does. Offline ones too, unless they went offline because they are being removed (the only
   * time a simulated node reports NotReady): one that timed out (the heartbeats lost, say)
   * came back on its next beat, and reporting online ones only left it offline for good.
   */
  async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      const nodes = await findAll<NodeDoc & Doc>(this.readModels, NODES, {
        provisioner: SIMULATED,
        offlineReason: { $ne: 'kubelet_not_ready' },
      });
      const byCluster = new Map<string, NodeReport[]>();
      for (const node of nodes) {
        if (this.removing.has(node.nodeId)) continue;
        const list = byCluster.get(node.clusterId) ?? [];
        list.push(this.reportOf(node));
        byCluster.set(node.clusterId, list);
      }
      for (const [clusterId, reports] of byCluster) {
        await this.commands.execute(new ReportInventory(clusterId, reports, context(newId())));
      }
    } catch (error) {
      this.logger.warn(`simulated heartbeat failed: ${String(error)}`);
    } finally {
      this.beating = false;
    }
  }
}
