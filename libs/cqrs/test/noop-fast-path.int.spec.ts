import fc from 'fast-check';
import {
  CommandContext,
  Decider,
  DomainError,
  EventCodec,
  SYSTEM_ACTOR,
  isLater,
  uuidFrom,
} from '@fleet/kernel';
import { SqliteEventStore } from '@fleet/eventstore/sqlite-event-store';
import { EventStore } from '@fleet/eventstore/port';
import { CommandPipeline } from '../src/command-pipeline';

/**
 * The no-op fast path (noop-fast-path.ts) answers exactly as the plain load → decide → append
 * path does: the same scenario of commands is run in two worlds, one pipeline with the fast
 * path and one without, each with a replica writing behind its cache, and every command's
 * answer (events, state, revision, positions, appended) or refusal must be the same, and so
 * must the log.
 */

type Cmd =
  | { type: 'Add'; data: { amount: number } }
  | { type: 'Close'; data: Record<string, never> }
  | { type: 'Reopen'; data: Record<string, never> }
  | { type: 'Touch'; data: Record<string, never> }
  | { type: 'Fail'; data: Record<string, never> };
type Ev =
  | { type: 'Added'; data: { amount: number } }
  | { type: 'Closed'; data: Record<string, never> }
  | { type: 'Reopened'; data: Record<string, never> };
type St = { total: number; closed: boolean };

/** Adds (0 changes nothing), refused while closed; Close and Reopen idempotent; Fail always refused. */
const counter: Decider<Cmd, Ev, St> = {
  initialState: () => ({ total: 0, closed: false }),
  evolve: (s, e) =>
    e.type === 'Added'
      ? { ...s, total: s.total + e.data.amount }
      : { ...s, closed: e.type === 'Closed' },
  decide: (c, s) => {
    switch (c.type) {
      case 'Fail':
        throw new DomainError('refused', 'always');
      case 'Touch':
        return [];
      case 'Close':
        return s.closed ? [] : [{ type: 'Closed', data: {} }];
      case 'Reopen':
        return s.closed ? [{ type: 'Reopened', data: {} }] : [];
      case 'Add':
        if (s.closed) throw new DomainError('invalid_transition', 'closed');
        return c.data.amount === 0 ? [] : [{ type: 'Added', data: c.data }];
    }
  },
};
const aggregate = {
  name: 'counter',
  decider: counter,
  codec: new EventCodec<Ev>({ Added: 1, Closed: 1, Reopened: 1 }),
};

const command: fc.Arbitrary<Cmd> = fc.oneof(
  fc.integer({ min: 0, max: 2 }).map((amount): Cmd => ({ type: 'Add', data: { amount } })),
  fc.constantFrom<Cmd>(
    { type: 'Add', data: { amount: 0 } },
    { type: 'Close', data: {} },
    { type: 'Reopen', data: {} },
    { type: 'Touch', data: {} },
    { type: 'Fail', data: {} },
  ),
);
const stream = fc.constantFrom('c-a', 'c-b', 'c-c', 'c-d');
type Item = { stream: string; command: Cmd };
const item = fc.record({ stream, command });

type Step =
  /** One command on this pipeline, awaited. */
  | { kind: 'one'; item: Item }
  /** One command by a replica (its own cache), behind this pipeline's. */
  | { kind: 'replica'; item: Item }
  /** A report's pass: one command per stream, `decideNoops` then `handle` for the rest. */
  | { kind: 'many'; items: Item[] }
  /**
   * Commands sent together on one stream, without waiting for each other. (On several streams
   * the log's order between them is the scheduler's, on either path.)
   */
  | { kind: 'race'; items: Item[] };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: item.map((i): Step => ({ kind: 'one', item: i })) },
  { weight: 1, arbitrary: item.map((i): Step => ({ kind: 'replica', item: i })) },
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(item, { minLength: 1, maxLength: 4, selector: (i) => i.stream })
      .map((items): Step => ({ kind: 'many', items })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(stream, fc.array(command, { minLength: 2, maxLength: 4 }))
      .map(([on, commands]): Step => ({
        kind: 'race',
        items: commands.map((c) => ({ stream: on, command: c })),
      })),
  },
);

const ctx = (at: string): CommandContext => {
  const commandId = uuidFrom('noop-fast-path', at);
  return {
    commandId,
    correlationId: commandId,
    causationId: commandId,
    actor: SYSTEM_ACTOR,
    now: new Date('2026-12-02T10:00:00Z'),
  };
};

/** A command's answer, or its refusal's code. */
const answer = (settled: PromiseSettledResult<unknown>): unknown =>
  settled.status === 'fulfilled'
    ? settled.value
    : { refused: (settled.reason as DomainError).code ?? String(settled.reason) };

/** Runs the scenario on a fresh store; every answer in order, then the log. */
const run = async (
  steps: readonly Step[],
  seen: (s: SqliteEventStore) => EventStore,
  fastPath: boolean,
): Promise<unknown[]> => {
  const sqlite = new SqliteEventStore({ file: ':memory:' });
  try {
    const store = seen(sqlite);
    const pipeline = new CommandPipeline(store, { noopFastPath: fastPath });
    const replica = new CommandPipeline(store, { noopFastPath: fastPath });
    const answers: unknown[] = [];
    const send = (p: CommandPipeline, i: Item, at: string) =>
      p.handle(aggregate, i.stream, i.command, ctx(at));
    for (const [n, s] of steps.entries()) {
      if (s.kind === 'one' || s.kind === 'replica') {
        const by = s.kind === 'one' ? pipeline : replica;
        answers.push(answer((await Promise.allSettled([send(by, s.item, `${n}`)]))[0]));
      } else if (s.kind === 'race') {
        const sent = s.items.map((i, k) => send(pipeline, i, `${n}.${k}`));
        answers.push(...(await Promise.allSettled(sent)).map(answer));
      } else {
        const decided = pipeline.decideNoops(
          aggregate,
          s.items.map((i) => i.stream),
          s.items.map((i) => i.command),
        );
        const noops = isLater(decided) ? await decided : decided;
        const sent = s.items.map((i, k) => noops[k] ?? send(pipeline, i, `${n}.${k}`));
        answers.push(...(await Promise.allSettled(sent)).map(answer));
      }
    }
    answers.push(await sqlite.readAll({ limit: 10_000 }));
    return answers;
  } finally {
    await sqlite.close();
  }
};

describe.each([
  ['a store reading its heads in process', (s: SqliteEventStore): EventStore => s],
  [
    'a store answering heads through a promise',
    (s: SqliteEventStore): EventStore =>
      Object.assign(Object.create(s) as EventStore, {
        streamRevisions: async (ids: readonly string[]) => s.streamRevisions(ids),
      }),
  ],
  [
    'a store without batched heads',
    (s: SqliteEventStore): EventStore =>
      Object.assign(Object.create(s) as EventStore, { streamRevisions: undefined }),
  ],
])('the no-op fast path, on %s', (_what, seen) => {
  it('answers every command as the plain path does: events, state, revisions, refusals, log', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        expect(await run(steps, seen, true)).toEqual(await run(steps, seen, false));
      }),
      { numRuns: 150 },
    );
  });

  it('takes the fast path in such scenarios (the property is not vacuous)', async () => {
    const sqlite = new SqliteEventStore({ file: ':memory:' });
    const pipeline = new CommandPipeline(seen(sqlite));
    const outcomes: string[] = [];
    pipeline.onOutcome((o) => outcomes.push(`${o.command}:${o.result}:${o.count ?? 1}`));
    const read = jest.spyOn(sqlite, 'readStream');
    await pipeline.handle(aggregate, 'c-a', { type: 'Add', data: { amount: 1 } }, ctx('x'));
    await pipeline.handle(aggregate, 'c-b', { type: 'Close', data: {} }, ctx('y'));
    read.mockClear();
    await pipeline.handle(aggregate, 'c-a', { type: 'Touch', data: {} }, ctx('z'));
    const decided = pipeline.decideNoops(
      aggregate,
      ['c-a', 'c-b'],
      [
        { type: 'Add', data: { amount: 0 } },
        { type: 'Close', data: {} },
      ],
    );
    expect((isLater(decided) ? await decided : decided).every((r) => r !== undefined)).toBe(true);
    // Answered from the cached states: no stream was read.
    expect(read).not.toHaveBeenCalled();
    expect(outcomes.slice(2)).toEqual(['Touch:noop:1', 'Add:noop:1', 'Close:noop:1']);
    await sqlite.close();
  });
});
