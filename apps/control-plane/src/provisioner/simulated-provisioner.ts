import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandContext, systemContext, newId, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config } from '../config/config';
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

const SIMULATED = 'simulated';

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
    if (this.timer) clearInterval(this.timer);
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
