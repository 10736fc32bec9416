import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  Carriers,
  CommandPipeline,
  SubscriptionRunner,
  WorkflowRun,
  WorkflowRunner,
  cancelTimer,
  sendCommand,
} from '@fleet/cqrs';
import { EventStore, StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs, scheduleUnlessBusy } from '@fleet/jobs/port';
import { Clock, CommandContext, DomainError, systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { AddPoolToCluster, clusterCodec } from '../clusters';
import { CLOCK, DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { ChangePoolSpec, EndPoolOperation, MarkPoolDeleted, NODE_POOLS, PoolDoc } from '../pools';
import { PROVISIONER, Provisioner } from '../provisioner';
import {
  OperationCommand,
  OperationState,
  isFinished,
  operationAggregate,
} from './operation.decider';
import { operationCodec, operationStreamId } from './operation.events';
import {
  OperationInput,
  OperationOutput,
  OperationSnapshot,
  operationWorkflow,
} from './operation.workflow';
import { OPERATIONS, OperationDoc } from './operations.projection';
import { PoolOperationEffects, operationCommandId, poolOp } from './pool-operation.effects';
import { ClusterOperationEffects } from './cluster-operation.effects';

export const OPERATION_STEP_QUEUE = 'operation-step';
export const OPERATION_DEADLINE_QUEUE = 'operation-deadline';
/** Operations not finished: each should have a deadline job. */
const OPEN = { status: { $in: ['pending', 'running'] } };

type Job = { operationId: string };
type Running = Extract<OperationState, { operationId: string }>;
type Run = WorkflowRun<OperationInput, OperationSnapshot>;

/**
 * The operations saga: operation.workflow decides, the workflow runner carries it out. A
 * delayed job carries each operation from step to step (so a crash resumes it) and a second
 * job at the deadline times it out; every effect is idempotent. Steps of an operation run one
 * at a time; its deadline and its end run beside them (a step stuck on the provisioner does
 * not hold its timeout back).
 */
@Injectable()
export class OperationsSaga {
  private readonly logger = new Logger('operations');
  private readonly steps: WorkflowRunner<OperationInput, OperationOutput, OperationSnapshot>;
  private readonly timers: WorkflowRunner<OperationInput, OperationOutput, OperationSnapshot>;
  private readonly effects: PoolOperationEffects;
  private readonly clusterEffects: ClusterOperationEffects;
  /** Each operation's request's correlation id (its first event's), read once per process. */
  private readonly correlations = new Map<string, string>();

  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(PROVISIONER) provisioner: Provisioner,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CLOCK) private readonly clock: Clock,
    /** Pools, clusters, nodes and drains are their slices': asked of them on the buses. */
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) queries: QueryBus,
  ) {
    this.effects = new PoolOperationEffects({
      pipeline,
      readModels,
      provisioner,
      commands,
      queries,
      context: (operationId, commandId) => this.context(operationId, commandId),
    });
    this.clusterEffects = new ClusterOperationEffects({
      readModels,
      provisioner,
      commands,
      queries,
      context: (operationId, commandId) => this.context(operationId, commandId),
    });
    const options = {
      workflow: operationWorkflow,
      load: (id: string, input: OperationInput) => this.snapshot(id, input),
      carriers: this.carriers(),
      clock,
    };
    this.steps = new WorkflowRunner(options);
    this.timers = new WorkflowRunner(options);
  }

  register(): void {
    this.jobs.register<Job>(OPERATION_STEP_QUEUE, (job) => this.step(job.operationId), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 20,
    });
    this.jobs.register<Job>(OPERATION_DEADLINE_QUEUE, (job) => this.deadline(job.operationId), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 20,
    });
  }

  schedule(operationId: string, delayMs = 0): Promise<void> {
    const at = this.clock.now().getTime() + delayMs;
    return this.scheduleUnlessRunning(OPERATION_STEP_QUEUE, operationId, at);
  }

  async arm(op: Pick<Running, 'operationId' | 'deadlineAt'>): Promise<void> {
    await this.scheduleUnlessRunning(
      OPERATION_DEADLINE_QUEUE,
      op.operationId,
      Date.parse(op.deadlineAt),
    );
    await this.schedule(op.operationId);
  }

  /** Every run re-reads state: when its run cannot be put in place, one is coming anyway. */
  private async scheduleUnlessRunning(queue: string, operationId: string, at: number) {
    if (!(await scheduleUnlessBusy<Job>(this.jobs, queue, operationId, at, { operationId })))
      this.logger.warn(`operation ${operationId}: ${queue} already running on a stalled worker`);
  }

  /** Requested → armed; finished → the pool is free again (and a failed deletion gives it back). */
  async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('cluster-')) {
      // A lifecycle move wakes the cluster's open operations at once.
      if (clusterCodec.decode(stored.type, stored.data)?.type !== 'ClusterTransitioned') return;
      await this.runner.settle(stored.position, ['projection:clusters']);
      const open = await this.readModels.find<OperationDoc & Doc>(
        OPERATIONS,
        {
          clusterId: stored.streamId.slice('cluster-'.length),
          poolId: null,
          status: { $in: ['pending', 'running'] },
        },
        { limit: 100 },
      );
      for (const op of open.items) await this.schedule(op.operationId);
      return;
    }
    if (!stored.streamId.startsWith('operation-')) return;
    const event = operationCodec.decode(stored.type, stored.data);
    if (!event) return;
    if (event.type === 'OperationRequested') return this.arm(event.data);
    if (
      event.type !== 'OperationSucceeded' &&
      event.type !== 'OperationFailed' &&
      event.type !== 'OperationTimedOut'
    )
      return;
    const { operationId, at } = event.data;
    await this.timers.run(operationId, {
      type: 'OperationEnded',
      data: {
        operationId,
        succeeded: event.type === 'OperationSucceeded',
        at,
        eventId: stored.eventId,
        correlationId: stored.metadata.correlationId,
      },
    });
    this.correlations.delete(operationId);
    this.effects.forget(operationId);
    this.clusterEffects.forget(operationId);
  }

  async deadline(operationId: string): Promise<void> {
    await this.timers.run(operationId, (now) => ({
      type: 'OperationDeadlineDue',
      data: { operationId, at: now.toISOString() },
    }));
  }

  /** One step; steps of one operation never overlap in this process. */
  async step(operationId: string): Promise<void> {
    try {
      await this.steps.run(operationId, (now) => ({
        type: 'OperationStepDue',
        data: { operationId, at: now.toISOString() },
      }));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error; // transient: the job retries
      await this.steps.run(operationId, (now) => ({
        type: 'OperationStepRefused',
        data: { operationId, error: `${error.code}: ${error.message}`, at: now.toISOString() },
      }));
    }
  }

  /** What a step decides on (OperationSnapshot); a timer or an end needs the operation only. */
  private async snapshot(id: string, input: OperationInput): Promise<OperationSnapshot> {
    const { state: op } = await this.pipeline.load(operationAggregate, operationStreamId(id));
    const bare = { ...operationWorkflow.initialState(), op };
    if (input.type !== 'OperationStepDue' || op.status === 'absent' || isFinished(op.status))
      return bare;
    if (op.poolId === null) return this.clusterEffects.snapshot({ ...bare, op });
    return this.effects.snapshot({ ...bare, op: { ...op, poolId: op.poolId } });
  }

  private carriers(): Carriers<OperationInput, OperationOutput, OperationSnapshot> {
    const onOperation = sendCommand(
      this.pipeline,
      operationAggregate,
      async (command: OperationCommand, run: Run) => ({
        streamId: operationStreamId(run.instanceId),
        command,
        context: await this.context(run.instanceId, operationCommandId(run.instanceId, command)),
      }),
    );
    const poolContext = (run: Run, key: string) =>
      this.context(run.instanceId, uuidFrom(run.instanceId, key));
    return {
      StartOperationStep: onOperation,
      CompleteOperationStep: onOperation,
      ChooseOperationNodes: onOperation,
      SucceedOperation: onOperation,
      FailOperation: onOperation,
      TimeOutOperation: onOperation,
      CreateNodes: (output, run) => this.effects.createNodes(output.data, run),
      DrainNode: (output, run) => this.effects.drainNode(output.data.nodeId, run),
      RemoveNodes: (output, run) => this.effects.removeNodes(output.data, run),
      DeleteNode: (output, run) => this.effects.deleteNode(output.data, run),
      MarkPoolDeleted: async ({ data }, run) =>
        this.commands.execute(
          new MarkPoolDeleted(poolOp(run).poolId, data, await poolContext(run, 'pool-deleted')),
        ),
      AskProvisioner: (output, run) => this.clusterEffects.ask(output.data, run),
      MarkClusterPoolsDeleted: (output, run) =>
        this.clusterEffects.markPoolsDeleted(output.data, run),
      MarkClusterDeleted: (output, run) => this.clusterEffects.markDeleted(output.data, run),
      ChangePoolSpec: async ({ data }, run) =>
        this.commands.execute(
          new ChangePoolSpec(poolOp(run).poolId, data, await poolContext(run, 'spec')),
        ),
      ...this.endCarriers(),
      ArmOperation: (output) => this.arm(output.data),
      ScheduleOperationStep: (output, run) => this.schedule(run.instanceId, output.data.delayMs),
    };
  }

  /** An operation's end: contexts of the event that recorded it, as its reaction always had. */
  private endCarriers() {
    const ended = (run: Run, key: string) => {
      if (run.input.type !== 'OperationEnded') throw new Error('a pool release without its end');
      const { eventId, correlationId } = run.input.data;
      const causationId = uuidFrom(eventId, 'end-pool-op');
      return systemContext(uuidFrom(eventId, key), { correlationId, causationId, now: run.now });
    };
    return {
      AddPoolToCluster: (
        { data }: Extract<OperationOutput, { type: 'AddPoolToCluster' }>,
        run: Run,
      ) => this.commands.execute(new AddPoolToCluster(data, ended(run, 'restore-pool'))),
      EndPoolOperation: (
        { data }: Extract<OperationOutput, { type: 'EndPoolOperation' }>,
        run: Run,
      ) =>
        this.commands.execute(
          new EndPoolOperation(poolOp(run).poolId, data, ended(run, 'end-pool-op')),
        ),
      CancelOperationDeadline: cancelTimer(
        this.jobs,
        OPERATION_DEADLINE_QUEUE,
        (output: Extract<OperationOutput, { type: 'CancelOperationDeadline' }>) =>
          output.data.operationId,
      ),
    };
  }

  /**
   * Re-arms each unfinished operation whose deadline job is gone (a Redis that lost its jobs
   * while we ran: step and deadline went together); runs every JOBS_REPAIR_SEC. A step armed
   * twice is harmless: every step re-reads state.
   */
  async repair(): Promise<number> {
    const open = await findAll<OperationDoc & Doc>(this.readModels, OPERATIONS, OPEN);
    if (open.length === 0) return 0;
    const live = await this.jobs.liveJobIds(OPERATION_DEADLINE_QUEUE);
    const lost = open.filter((op) => !live.has(op.operationId));
    for (const op of lost) await this.arm(op);
    if (lost.length > 0) this.logger.log(`re-armed ${lost.length} operation(s) from state`);
    return lost.length;
  }

  /** Re-arms every unfinished operation (after a restart or a lost Redis); frees orphaned pool locks. */
  async reconcile(): Promise<void> {
    const open = await findAll<OperationDoc & Doc>(this.readModels, OPERATIONS, OPEN);
    for (const op of open) await this.arm(op);
    const locked = await findAll<PoolDoc & Doc>(this.readModels, NODE_POOLS, {
      operation: { $ne: null },
    });
    for (const pool of locked) {
      const operationId = pool.operation!.operationId;
      const { state } = await this.pipeline.load(
        operationAggregate,
        operationStreamId(operationId),
      );
      // A crash between locking the pool and opening the operation: nothing runs, so unlock.
      if (state.status !== 'absent') continue;
      const now = this.clock.now();
      await this.commands.execute(
        new EndPoolOperation(
          pool.poolId,
          { operationId, at: now.toISOString() },
          systemContext(uuidFrom(operationId, 'orphaned'), { correlationId: operationId, now }),
        ),
      );
    }
    if (open.length) this.logger.log(`re-armed ${open.length} operation(s)`);
  }

  /**
   * What the operation does is done in its request's correlation (API-ADDITIONS: everything one
   * request set off shares it), so an auditor following the admin's request finds the drains,
   * relocations and removals it caused. The id is its first event's; an operation whose
   * stream cannot be read (none in practice) falls back to its own id.
   */
  private async context(operationId: string, commandId: string): Promise<CommandContext> {
    let correlationId = this.correlations.get(operationId);
    if (correlationId === undefined) {
      const [first] = await this.store.readStream(operationStreamId(operationId), { limit: 1 });
      correlationId = first?.metadata.correlationId ?? operationId;
      if (this.correlations.size >= 10_000) this.correlations.clear();
      this.correlations.set(operationId, correlationId);
    }
    return systemContext(commandId, { correlationId, now: this.clock.now() });
  }
}
