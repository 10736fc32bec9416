import { InProcessJobs } from '@fleet/jobs/in-process-jobs';
import { DelayedJobs, JobSlotsBusyError } from '@fleet/jobs/port';
import { Message, Workflow, manualClock, systemContext } from '@fleet/kernel';
import { CommandPipeline } from './command-pipeline';
import {
  Carriers,
  WorkflowRun,
  WorkflowRunner,
  cancelTimer,
  scheduleTimer,
  sendCommand,
} from './workflow-runner';

type Tick = Message<'Tick', { at: string }>;
type Out =
  | Message<'Send', { n: number }>
  | Message<'Call', { n: number }>
  | Message<'Wake', { inMs: number }>;
/** A counter read from outside (the test's `stored`), deciding one Send per missing unit. */
type Count = { seen: number; want: number };

const T0 = '2026-12-02T10:00:00.000Z';
const counter: Workflow<Tick, Out, Count> = {
  decide: (_tick, { seen, want }) => [
    ...Array.from({ length: Math.max(0, want - seen) }, (_, i) => ({
      type: 'Send' as const,
      data: { n: seen + i },
    })),
    { type: 'Wake', data: { inMs: 1000 } },
  ],
  evolve: (state) => state,
  initialState: () => ({ seen: 0, want: 0 }),
};

/** A promise the test settles by hand, to see what runs while a carrier waits. */
const gate = () => {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
};

const runnerWith = (
  carriers: Carriers<Tick, Out, Count>,
  options: { want?: number; together?: Array<Out['type']> } = {},
) => {
  const clock = manualClock(T0);
  const loads: string[] = [];
  const runner = new WorkflowRunner<Tick, Out, Count>({
    workflow: counter,
    load: async (id) => {
      loads.push(id);
      return { seen: 0, want: options.want ?? 2 };
    },
    carriers,
    clock,
    together: options.together,
  });
  return { runner, clock, loads };
};
const tick = (now: Date): Tick => ({ type: 'Tick', data: { at: now.toISOString() } });

describe('the workflow runner', () => {
  it('loads the instance, decides, and carries each output in order, with the time of the clock', async () => {
    const carried: Array<[string, unknown, WorkflowRun<Tick, Count>]> = [];
    const record = async (o: Out, run: WorkflowRun<Tick, Count>) => {
      carried.push([o.type, o.data, run]);
    };
    const { runner, clock, loads } = runnerWith({ Send: record, Call: record, Wake: record });
    clock.advance(5000);

    const outputs = await runner.run('c1', tick);

    expect(loads).toEqual(['c1']);
    expect(outputs.map((o) => o.type)).toEqual(['Send', 'Send', 'Wake']);
    expect(carried.map(([type, data]) => [type, data])).toEqual([
      ['Send', { n: 0 }],
      ['Send', { n: 1 }],
      ['Wake', { inMs: 1000 }],
    ]);
    expect(carried[0][2]).toEqual({
      instanceId: 'c1',
      input: { type: 'Tick', data: { at: '2026-12-02T10:00:05.000Z' } },
      state: { seen: 0, want: 2 },
      now: new Date('2026-12-02T10:00:05.000Z'),
    });
  });

  it('takes an input as given', async () => {
    const { runner } = runnerWith({
      Send: async () => undefined,
      Call: async () => undefined,
      Wake: async (_o, run) => expect(run.input.data.at).toBe('2000-01-01T00:00:00.000Z'),
    });
    expect.assertions(1);
    await runner.run('c1', { type: 'Tick', data: { at: '2000-01-01T00:00:00.000Z' } });
  });

  it('carries outputs one after another, and consecutive `together` outputs at once', async () => {
    const sends = [gate(), gate()];
    const started: string[] = [];
    const carriers: Carriers<Tick, Out, Count> = {
      Send: async (o) => {
        started.push(`send ${o.data.n}`);
        await sends[o.data.n].promise;
      },
      Call: async () => undefined,
      Wake: async () => void started.push('wake'),
    };
    const alone = runnerWith(carriers).runner.run('c1', tick);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['send 0']);
    sends[0].open();
    sends[1].open();
    await alone;
    expect(started).toEqual(['send 0', 'send 1', 'wake']);

    started.length = 0;
    const [first, second] = [gate(), gate()];
    sends.splice(0, 2, first, second);
    const together = runnerWith(carriers, { together: ['Send'] }).runner.run('c1', tick);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['send 0', 'send 1']);
    second.open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['send 0', 'send 1']); // the Wake waits for the whole group
    first.open();
    await together;
    expect(started).toEqual(['send 0', 'send 1', 'wake']);
  });

  it('ends a run at a carrier that throws, with its error; the next run starts afresh', async () => {
    const carried: string[] = [];
    let failing = true;
    const { runner } = runnerWith({
      Send: async (o) => {
        if (failing && o.data.n === 0) throw new Error('store out of reach');
        carried.push(`send ${o.data.n}`);
      },
      Call: async () => undefined,
      Wake: async () => void carried.push('wake'),
    });
    await expect(runner.run('c1', tick)).rejects.toThrow('store out of reach');
    expect(carried).toEqual([]);
    failing = false;
    await runner.run('c1', tick);
    expect(carried).toEqual(['send 0', 'send 1', 'wake']);
  });

  it('never overlaps two runs of one instance; other instances do not wait', async () => {
    const held = gate();
    const log: string[] = [];
    const { runner, loads } = runnerWith(
      {
        Send: async (_o, run) => {
          log.push(`${run.instanceId} send`);
          if (run.instanceId === 'c1' && log.length === 1) await held.promise;
        },
        Call: async () => undefined,
        Wake: async (_o, run) => void log.push(`${run.instanceId} wake`),
      },
      { want: 1 },
    );
    const first = runner.run('c1', tick);
    const second = runner.run('c1', tick);
    const other = runner.run('c2', tick);
    await other;
    expect(loads).toEqual(['c1', 'c2']);
    expect(log).toEqual(['c1 send', 'c2 send', 'c2 wake']);
    held.open();
    await Promise.all([first, second]);
    expect(loads).toEqual(['c1', 'c2', 'c1']);
    expect(log).toEqual(['c1 send', 'c2 send', 'c2 wake', 'c1 wake', 'c1 send', 'c1 wake']);
  });
});

describe('carriers', () => {
  const run: WorkflowRun<Tick, Count> = {
    instanceId: 'c1',
    input: { type: 'Tick', data: { at: T0 } },
    state: { seen: 0, want: 1 },
    now: new Date(T0),
  };

  it('sendCommand hands the routed command to the pipeline and its result to `then`', async () => {
    const result = { events: [], appended: false };
    const handle = jest.fn(async () => result);
    const pipeline = { handle } as unknown as CommandPipeline;
    const aggregate = { name: 'counter' } as never;
    const then = jest.fn();
    const carry = sendCommand<Out, Tick, Count, Message, Message, unknown>(
      pipeline,
      aggregate,
      (o, r) => ({
        streamId: `counter-${r.instanceId}`,
        command: { type: 'Count', data: o.data },
        context: systemContext(`count-${r.instanceId}`, { now: r.now }),
      }),
      then,
    );

    await expect(carry({ type: 'Send', data: { n: 3 } }, run)).resolves.toBe(result);
    expect(handle).toHaveBeenCalledWith(
      aggregate,
      'counter-c1',
      { type: 'Count', data: { n: 3 } },
      systemContext('count-c1', { now: new Date(T0) }),
    );
    expect(then).toHaveBeenCalledWith(result, { type: 'Send', data: { n: 3 } }, run);
  });

  it('scheduleTimer arms a job under its id (a second schedule moves it); cancelTimer removes it', async () => {
    const jobs = new InProcessJobs();
    jobs.register('wake', async () => undefined);
    const wake = scheduleTimer<Out, Tick, Count, { id: string }>(jobs, 'wake', (o, r) => ({
      jobId: r.instanceId,
      runAt: r.now.getTime() + (o.type === 'Wake' ? o.data.inMs : 0),
      payload: { id: r.instanceId },
    }));
    await wake({ type: 'Wake', data: { inMs: 1000 } }, run);
    await wake({ type: 'Wake', data: { inMs: 5000 } }, run);
    expect([...(await jobs.liveJobIds('wake'))]).toEqual(['c1']);
    expect(await jobs.scheduledAt('wake', 'c1')).toBe(Date.parse(T0) + 5000);

    await cancelTimer<Out, Tick, Count>(
      jobs,
      'wake',
      (_o, r) => r.instanceId,
    )({ type: 'Wake', data: { inMs: 0 } }, run);
    expect(await jobs.scheduledAt('wake', 'c1')).toBeNull();
    await jobs.close();
  });

  it('scheduleTimer with onBusy reports a job whose due run keeps being taken; without, fails', async () => {
    const busy = {
      schedule: async () => {
        throw new JobSlotsBusyError('wake', 'c1');
      },
    } as unknown as DelayedJobs;
    const timer = () => ({ jobId: 'c1', runAt: 0, payload: {} });
    const onBusy = jest.fn();
    await scheduleTimer(busy, 'wake', timer, onBusy)({ type: 'Wake', data: { inMs: 0 } }, run);
    expect(onBusy).toHaveBeenCalledWith('c1');
    await expect(
      scheduleTimer(busy, 'wake', timer)({ type: 'Wake', data: { inMs: 0 } }, run),
    ).rejects.toBeInstanceOf(JobSlotsBusyError);
  });
});
