import { DelayedJobs, scheduleUnlessBusy } from '@fleet/jobs/port';
import { Clock, CommandContext, Message, Turns, Workflow } from '@fleet/kernel';
import { Aggregate, CommandPipeline, CommandResult } from './command-pipeline';

/**
 * The one runner of process managers. `run(instanceId, input)`: read the time once from the
 * Clock, load the instance's state (the saga's own reading of its streams and read models),
 * `decide(input, state)`, then carry the outputs out in order, each by the carrier named by its
 * type: a command through the pipeline (`sendCommand`), a timer as a delayed job with a
 * deterministic id (`scheduleTimer`, `cancelTimer`), anything else (a provisioner call, a
 * command on another slice's bus) a named effect handler. Consecutive outputs of a `together`
 * type are carried at once. A carrier that throws ends the run with its error (the job that
 * asked retries; each run decides again from state). Runs of one instance never overlap in
 * this process. Nothing is stored by the runner: the carriers' commands are the record.
 */

/** What a carrier knows of the run it carries an output of. */
export type WorkflowRun<I, S> = {
  readonly instanceId: string;
  readonly input: I;
  readonly state: S;
  /** The run's time, read once from the Clock (inputs carry it too, as `at`). */
  readonly now: Date;
};

export type Carrier<O, I, S> = (output: O, run: WorkflowRun<I, S>) => Promise<unknown>;

/** One carrier per output type: a new output type cannot be left without one. */
export type Carriers<I extends Message, O extends Message, S> = {
  readonly [T in O['type']]: Carrier<Extract<O, { type: T }>, I, S>;
};

export type WorkflowRunnerOptions<I extends Message, O extends Message, S> = {
  readonly workflow: Workflow<I, O, S>;
  /** The instance's state as the next decision needs it (a fold of its streams, reads). */
  readonly load: (instanceId: string, input: I) => Promise<S>;
  readonly carriers: Carriers<I, O, S>;
  readonly clock: Clock;
  /** Output types whose consecutive outputs are independent and carried at once. */
  readonly together?: ReadonlyArray<O['type']>;
};

export class WorkflowRunner<I extends Message, O extends Message, S> {
  private readonly turns = new Turns();
  private readonly together: ReadonlySet<string>;

  constructor(private readonly options: WorkflowRunnerOptions<I, O, S>) {
    this.together = new Set(options.together ?? []);
  }

  /**
   * Load → decide → carry out, after the instance's run in progress, if any. `input` may be
   * made from the run's time (a timer that fired, a tick). Resolves with the outputs carried.
   */
  run(instanceId: string, input: I | ((now: Date) => I)): Promise<readonly O[]> {
    return this.turns.run(instanceId, () => this.once(instanceId, input));
  }

  private async once(instanceId: string, make: I | ((now: Date) => I)): Promise<readonly O[]> {
    const now = this.options.clock.now();
    const input = typeof make === 'function' ? make(now) : make;
    const state = await this.options.load(instanceId, input);
    const outputs = this.options.workflow.decide(input, state);
    const run: WorkflowRun<I, S> = { instanceId, input, state, now };
    for (let i = 0; i < outputs.length;) {
      let end = i + 1;
      if (this.together.has(outputs[i].type))
        while (end < outputs.length && this.together.has(outputs[end].type)) end++;
      await Promise.all(outputs.slice(i, end).map((output) => this.carry(output, run)));
      i = end;
    }
    return outputs;
  }

  private carry(output: O, run: WorkflowRun<I, S>): Promise<unknown> {
    // The mapped type pairs each type with its output; indexed by a union, TS cannot see it.
    const carriers = this.options.carriers as unknown as Record<string, Carrier<O, I, S>>;
    return carriers[output.type](output, run);
  }
}

/** A command on one stream, and the context it is sent in (its id deterministic). */
export type Routed<C> = {
  readonly streamId: string;
  readonly command: C;
  readonly context: CommandContext;
};

/**
 * Carries an output as a command through the pipeline (load → decide → append). `then` sees
 * the command's result (a log line, or a follow-up that depends on it).
 */
export const sendCommand =
  <O, I, S, C extends Message, E extends Message, AS>(
    pipeline: CommandPipeline,
    aggregate: Aggregate<C, E, AS>,
    route: (output: O, run: WorkflowRun<I, S>) => Routed<C> | Promise<Routed<C>>,
    then?: (result: CommandResult<E, AS>, output: O, run: WorkflowRun<I, S>) => unknown,
  ): Carrier<O, I, S> =>
  async (output, run) => {
    const { streamId, command, context } = await route(output, run);
    const result = await pipeline.handle(aggregate, streamId, command, context);
    await then?.(result, output, run);
    return result;
  };

/** A delayed job: its id deterministic (a second schedule moves it, never doubles it). */
export type Timer<P> = { readonly jobId: string; readonly runAt: number; readonly payload: P };

/**
 * Carries an output as a delayed job. With `onBusy`, a job whose due run keeps being taken
 * ahead of it (JobSlotsBusyError: that run re-reads state anyway) is reported there instead of
 * failing the run.
 */
export const scheduleTimer =
  <O, I, S, P>(
    jobs: DelayedJobs,
    queue: string,
    timer: (output: O, run: WorkflowRun<I, S>) => Timer<P>,
    onBusy?: (jobId: string) => void,
  ): Carrier<O, I, S> =>
  async (output, run) => {
    const { jobId, runAt, payload } = timer(output, run);
    if (!onBusy) return jobs.schedule<P>(queue, jobId, runAt, payload);
    if (!(await scheduleUnlessBusy<P>(jobs, queue, jobId, runAt, payload))) onBusy(jobId);
  };

/** Carries an output as the cancellation of a delayed job. */
export const cancelTimer =
  <O, I, S>(
    jobs: DelayedJobs,
    queue: string,
    jobId: (output: O, run: WorkflowRun<I, S>) => string,
  ): Carrier<O, I, S> =>
  (output, run) =>
    jobs.cancel(queue, jobId(output, run));
