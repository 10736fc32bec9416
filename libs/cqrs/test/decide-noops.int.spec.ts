import { randomUUID } from 'node:crypto';
import { CommandContext, Decider, EventCodec, SYSTEM_ACTOR } from '@fleet/kernel';
import { SqliteEventStore } from '@fleet/eventstore/sqlite-event-store';
import { EventStore, LOG_START } from '@fleet/eventstore/port';
import { CommandPipeline, PipelineObserver } from '../src/command-pipeline';

type Cmd = { type: 'Add'; data: { amount: number } } | { type: 'Reset'; data: { to: 'same' } };
type Ev = { type: 'Added'; data: { amount: number } };
type St = { total: number };

const counter: Decider<Cmd, Ev, St> = {
  initialState: () => ({ total: 0 }),
  evolve: (s, e) => ({ total: s.total + e.data.amount }),
  decide: (c) =>
    c.type === 'Reset' || c.data.amount === 0 ? [] : [{ type: 'Added', data: c.data }],
};
const aggregate = { name: 'counter', decider: counter, codec: new EventCodec<Ev>({ Added: 1 }) };
const add = (amount: number): Cmd => ({ type: 'Add', data: { amount } });
/** A command of another type that never changes anything. */
const reset = (): Cmd => ({ type: 'Reset', data: { to: 'same' } });
const ctx = (): CommandContext => {
  const commandId = randomUUID();
  return {
    commandId,
    correlationId: commandId,
    causationId: commandId,
    actor: SYSTEM_ACTOR,
    now: new Date(),
  };
};

describe.each([
  ['with the store batching revisions', (s: SqliteEventStore): EventStore => s, true],
  [
    'with a store answering revisions only through a promise',
    // The same store seen through an object whose batched heads come through a promise.
    (s: SqliteEventStore): EventStore =>
      Object.assign(Object.create(s) as EventStore, {
        streamRevisions: async (ids: readonly string[]) => s.streamRevisions(ids),
      }),
    false,
  ],
  [
    'with a store without streamRevisions',
    // The same store seen through an object that lacks the optional method.
    (s: SqliteEventStore): EventStore =>
      Object.assign(Object.create(s) as EventStore, { streamRevisions: undefined }),
    false,
  ],
])('decideNoops %s', (_what, wrap, inProcess) => {
  let sqlite: SqliteEventStore;
  let pipeline: CommandPipeline;
  let outcomes: Array<Parameters<PipelineObserver>[0]>;
  beforeEach(() => {
    sqlite = new SqliteEventStore({ file: ':memory:' });
    pipeline = new CommandPipeline(wrap(sqlite));
    outcomes = [];
    pipeline.onOutcome((o) => outcomes.push(o));
  });
  afterEach(() => sqlite.close());

  it('answers the no-op result handle would give, only for cached, current, idle streams', async () => {
    await pipeline.handle(aggregate, 'counter-a', add(2), ctx());
    await pipeline.handle(aggregate, 'counter-b', add(3), ctx());
    await pipeline.handle(aggregate, 'counter-stale', add(1), ctx());
    // Another writer (a replica) appends behind this pipeline's cache.
    await new CommandPipeline(sqlite).handle(aggregate, 'counter-stale', add(1), ctx());
    outcomes = [];
    const busy = pipeline.handle(aggregate, 'counter-b', add(1), ctx());

    const ids = ['counter-a', 'counter-a', 'counter-b', 'counter-stale', 'counter-none'];
    const got = await pipeline.decideNoops(aggregate, ids, [
      add(0),
      add(5),
      add(0),
      add(0),
      add(0),
    ]);
    await busy;

    expect(got[0]).toEqual({
      events: [],
      state: { total: 2 },
      revision: 0,
      appended: false,
      position: LOG_START,
      headPosition: (await sqlite.readStream('counter-a'))[0].position,
    });
    expect(got[0]).toEqual(await pipeline.handle(aggregate, 'counter-a', add(0), ctx()));
    expect(got.slice(1)).toEqual([undefined, undefined, undefined, undefined]);
    // decideNoops' (one outcome for its one no-op) and handle's.
    expect(outcomes.filter((o) => o.result === 'noop').map((o) => o.count ?? 1)).toEqual([1, 1]);
    expect((await sqlite.readStream('counter-a')).length).toBe(1);
  });

  it('reports the no-ops of one pass once per command type, with their count', async () => {
    for (const id of ['c-1', 'c-2', 'c-3']) await pipeline.handle(aggregate, id, add(1), ctx());
    outcomes = [];
    const got = await pipeline.decideNoops(
      aggregate,
      ['c-1', 'c-2', 'c-3', 'c-1'],
      [add(0), add(0), reset(), add(7)],
    );
    expect(Array.from(got, (r) => r !== undefined)).toEqual([true, true, true, false]);
    expect(outcomes.map(({ command, result, count }) => ({ command, result, count }))).toEqual([
      { command: 'Add', result: 'noop', count: 2 },
      { command: 'Reset', result: 'noop', count: 1 },
    ]);
  });

  it('answers without a promise from a store that reads its heads in process, through one otherwise', async () => {
    await pipeline.handle(aggregate, 'n-1', add(1), ctx());
    await pipeline.handle(aggregate, 'n-2', add(2), ctx());
    const ids = ['n-1', 'n-2', 'n-none'];
    const commands = [add(0), add(4), add(0)];
    const expected = await pipeline.decideNoops(aggregate, ids, commands);
    outcomes = [];

    const now = pipeline.decideNoops(aggregate, ids, commands);

    if (!inProcess) {
      expect(now).toBeInstanceOf(Promise);
      expect(outcomes).toEqual([]);
      expect(await now).toEqual(expected);
      return;
    }
    expect(Array.isArray(now)).toBe(true);
    expect(now).toEqual(expected);
    expect(Array.from(now as unknown[], (r) => r !== undefined)).toEqual([true, false, false]);
    expect(outcomes.map(({ command, result, count }) => ({ command, result, count }))).toEqual([
      { command: 'Add', result: 'noop', count: 1 },
    ]);
    // A stream another writer appended to is no longer a no-op here: the head is read again.
    await new CommandPipeline(sqlite).handle(aggregate, 'n-1', add(1), ctx());
    expect(pipeline.decideNoops(aggregate, ['n-1'], [add(0)])).toEqual([undefined]);
  });

  it('answers nothing without the fast path: every command takes handle', async () => {
    const plain = new CommandPipeline(wrap(sqlite), { noopFastPath: false });
    await plain.handle(aggregate, 'p-1', add(1), ctx());
    expect(plain.decideNoops(aggregate, ['p-1', 'p-1'], [add(0), reset()])).toEqual([
      undefined,
      undefined,
    ]);
  });
});
