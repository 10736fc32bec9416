import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Carriers, CommandPipeline, WorkflowRunner, sendCommand } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Clock, systemContext, uuidFrom } from '@fleet/kernel';
import { EndOperation, OpenMeshOperation, ReportOperationStep } from '../operations';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc } from '../clusters';
import { Config } from '../config/config';
import { MESH_CONNECTOR, MeshConnector, MeshEnd } from '../provisioner';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { MeshState, meshAggregate } from './mesh.decider';
import { meshCodec, meshStreamId } from './mesh.events';
import { LinkAction, MeshLinkInput, MeshLinkOutput, meshLinkWorkflow } from './mesh-link.workflow';
import { MESH_REQUESTS, MeshRequestDoc } from './mesh.projection';

/** Requests the process still has work for: asked again at start and by the repair. */
const IN_FLIGHT = ['approved', 'connecting', 'cancelling', 'disconnecting'];

type StepOutput = Exclude<
  MeshLinkOutput,
  { type: 'AskMeshLink' | 'OpenMeshOperation' | 'EndMeshOperation' }
>;

const OPERATION_TYPE = { connect: 'connect_mesh', disconnect: 'disconnect_mesh' } as const;

/** The command id a link's operation is opened under, and so the operation's id (operations' rule). */
const openedUnder = (meshRequestId: string, action: LinkAction) =>
  uuidFrom(meshRequestId, OPERATION_TYPE[action]);
const operationIdOf = (meshRequestId: string, action: LinkAction) =>
  uuidFrom('operation', openedUnder(meshRequestId, action), OPERATION_TYPE[action]);

/**
 * Runs the mesh link workflow (mesh-link.workflow.ts) on the requests' moves from the log, on
 * the provisioner's answers, and on a repair (at start, then every JOBS_REPAIR_SEC in the
 * leader) that asks again for whatever a restart left in flight.
 */
@Injectable()
export class MeshLinkSaga implements OnModuleInit {
  private readonly logger = new Logger('mesh');
  private readonly runner: WorkflowRunner<MeshLinkInput, MeshLinkOutput, MeshState>;
  /** Provisioner calls this process has under way (one per request and action). */
  private readonly asking = new Set<string>();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(MESH_CONNECTOR) private readonly connector: MeshConnector,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.runner = new WorkflowRunner({
      workflow: meshLinkWorkflow,
      load: async (id) => (await this.pipeline.load(meshAggregate, meshStreamId(id))).state,
      carriers: this.carriers(),
      clock,
    });
  }

  onModuleInit(): void {
    this.registry.addReactor({ name: 'mesh-link', react: (e) => this.react(e) });
    this.runtime.afterStart(() => this.repair());
    this.runtime.every('mesh-link-repair', this.config.jobsRepairSec * 1000, () => this.repair());
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('mesh-')) return;
    const event = meshCodec.decode(stored.type, stored.data);
    if (event?.type !== 'MeshRequestMoved') return;
    const { meshRequestId, to, at } = event.data;
    await this.runner.run(meshRequestId, {
      type: 'MeshRequestMoved',
      data: { meshRequestId, to, eventId: stored.eventId, at },
    });
  }

  async repair(): Promise<void> {
    const docs = await findAll<MeshRequestDoc & Doc>(this.readModels, MESH_REQUESTS, {
      status: { $in: IN_FLIGHT },
    });
    for (const { meshRequestId } of docs) {
      await this.runner.run(meshRequestId, (now) => ({
        type: 'MeshLinkRepairDue',
        data: { meshRequestId, at: now.toISOString() },
      }));
    }
  }

  /** Asks the provisioner without holding the request's turn: its answer is a run of its own. */
  private ask(meshRequestId: string, action: LinkAction, state: MeshState): void {
    const key = `${meshRequestId}:${action}`;
    if (this.asking.has(key) || state.status === 'absent') return;
    this.asking.add(key);
    const call = async () => {
      const request = {
        meshRequestId,
        from: await this.end(state.fromClusterId),
        to: await this.end(state.toClusterId),
      };
      const failure = await (
        action === 'connect'
          ? this.connector.connectMesh(request)
          : this.connector.disconnectMesh(request)
      ).then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      await this.runner.run(meshRequestId, (now) => ({
        type: 'MeshLinkAnswered',
        data: { meshRequestId, action, failure, at: now.toISOString() },
      }));
    };
    void call()
      .catch((error: unknown) =>
        this.logger.warn(`mesh ${action} of ${meshRequestId}: ${String(error)}`),
      )
      .finally(() => this.asking.delete(key));
  }

  private async end(clusterId: string): Promise<MeshEnd> {
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    return { clusterId, podCidr: doc?.podCidr ?? null, serviceCidr: doc?.serviceCidr ?? null };
  }

  private carriers(): Carriers<MeshLinkInput, MeshLinkOutput, MeshState> {
    // Each step happens once in a request's life: its command id follows from the two.
    const step = sendCommand(this.pipeline, meshAggregate, (output: StepOutput) => ({
      streamId: meshStreamId(output.data.meshRequestId),
      command: {
        type: output.type,
        data: { ...output.data, by: 'system' },
      },
      context: systemContext(uuidFrom(output.data.meshRequestId, output.type), {
        correlationId: output.data.meshRequestId,
        now: new Date(output.data.at),
      }),
    }));
    return {
      BeginMeshConnect: step,
      MarkMeshConnected: step,
      MarkMeshCancelled: step,
      MarkMeshDisconnected: step,
      FailMeshStep: step,
      AskMeshLink: async ({ data }, run) => this.ask(data.meshRequestId, data.action, run.state),
      OpenMeshOperation: ({ data }, run) => {
        const { meshRequestId, action } = data;
        if (run.state.status === 'absent') return Promise.resolve();
        return this.commands.execute(
          new OpenMeshOperation(
            run.state.fromClusterId,
            OPERATION_TYPE[action],
            `${action} mesh ${meshRequestId} (${run.state.fromClusterId} ↔ ${run.state.toClusterId})`,
            systemContext(openedUnder(meshRequestId, action), {
              correlationId: meshRequestId,
              now: run.now,
            }),
          ),
        );
      },
      EndMeshOperation: async ({ data }, run) => {
        const { meshRequestId, action, error } = data;
        const operationId = operationIdOf(meshRequestId, action);
        const ctx = (what: string) =>
          systemContext(uuidFrom(operationId, what), {
            correlationId: meshRequestId,
            now: run.now,
          });
        if (error === null) {
          await this.commands.execute(
            new ReportOperationStep(
              operationId,
              action,
              { completed: true, detail: null },
              ctx('step'),
            ),
          );
        }
        await this.commands.execute(new EndOperation(operationId, error, ctx('end')));
      },
    };
  }
}
