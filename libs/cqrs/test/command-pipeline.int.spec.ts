import { randomUUID } from 'node:crypto';
import { CommandContext, Decider, DomainError, EventCodec, SYSTEM_ACTOR } from '@fleet/kernel';
import { SqliteEventStore } from '@fleet/eventstore/sqlite-event-store';
import { ConcurrencyConflictError, LOG_START } from '@fleet/eventstore/port';
import { CommandPipeline } from '../src/command-pipeline';

type Cmd =
  { type: 'Add'; data: { amount: number } } | { type: 'Close'; data: Record<string, never> };
type Ev =
  { type: 'Added'; data: { amount: number } } | { type: 'Closed'; data: Record<string, never> };
type St = { total: number; closed: boolean };

const counter: Decider<Cmd, Ev, St> = {
  initialState: () => ({ total: 0, closed: false }),
  evolve: (s, e) =>
    e.type === 'Added' ? { ...s, total: s.total + e.data.amount } : { ...s, closed: true },
  decide: (c, s) => {
    if (s.closed) throw new DomainError('invalid_transition', 'closed');
    if (c.type === 'Close') return [{ type: 'Closed', data: {} }];
    return c.data.amount === 0 ? [] : [{ type: 'Added', data: c.data }];
  },
};
const aggregate = {
  name: 'counter',
  decider: counter,
  codec: new EventCodec<Ev>({ Added: 1, Closed: 1 }),
};

const ctx = (commandId: string = randomUUID()): CommandContext => ({
  commandId,
  correlationId: 'corr-1',
  causationId: commandId,
  actor: SYSTEM_ACTOR,
  now: new Date('2026-12-02T10:00:00Z'),
});

describe('the command pipeline', () => {
  let store: SqliteEventStore;
  let pipeline: CommandPipeline;
  beforeEach(() => {
    store = new SqliteEventStore({ file: ':memory:' });
    pipeline = new CommandPipeline(store);
  });
  afterEach(() => store.close());

  it('loads, decides and appends with metadata and versioned type names', async () => {
    const r = await pipeline.handle(
      aggregate,
      'counter-a',
      { type: 'Add', data: { amount: 2 } },
      ctx('cmd-1'),
    );
    expect(r).toMatchObject({ appended: true, revision: 0, state: { total: 2 } });
    const [stored] = await store.readStream('counter-a');
    expect(stored.type).toBe('Added.v1');
    expect(stored.metadata).toMatchObject({
      correlationId: 'corr-1',
      causationId: 'cmd-1',
      actor: SYSTEM_ACTOR,
      occurredAt: '2026-12-02T10:00:00.000Z',
      schemaVersion: 1,
    });
  });

  it("records the leader's lease epoch of a command its periodic work issued, and none otherwise", async () => {
    const add = { type: 'Add' as const, data: { amount: 1 } };
    await pipeline.handle(aggregate, 'counter-a', add, { ...ctx(), leaderEpoch: 4 });
    await pipeline.handle(aggregate, 'counter-a', add, ctx());
    const [fenced, plain] = await store.readStream('counter-a');
    expect(fenced.metadata.leaderEpoch).toBe(4);
    expect(plain.metadata).not.toHaveProperty('leaderEpoch');
  });

  it('appends nothing when the decider sees nothing to change', async () => {
    await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 0 } }, ctx());
    expect(await store.headPosition()).toBe(0);
  });

  it('tells a command that changed nothing the position of the state it was decided on', async () => {
    const add = (amount: number) => ({ type: 'Add' as const, data: { amount } });
    // Another stream's events first, so positions and revisions differ.
    await pipeline.handle(aggregate, 'counter-z', add(1), ctx());
    const appended = await pipeline.handle(aggregate, 'counter-a', add(2), ctx());
    expect(appended.headPosition).toBe(appended.position);
    // Cached (no queue), folded afresh by another pipeline, and a pass of decideNoops.
    const cached = await pipeline.handle(aggregate, 'counter-a', add(0), ctx());
    const folded = await new CommandPipeline(store).handle(aggregate, 'counter-a', add(0), ctx());
    const [pass] = await pipeline.decideNoops(aggregate, ['counter-a'], [add(0)]);
    for (const noop of [cached, folded, pass!]) {
      expect(noop).toMatchObject({ appended: false, position: 0, headPosition: appended.position });
    }
    const none = await pipeline.handle(aggregate, 'counter-none', add(0), ctx());
    expect(none.headPosition).toBe(0);
  });

  it('appends nothing when the same command id comes again', async () => {
    const id = randomUUID();
    await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 2 } }, ctx(id));
    const again = await pipeline.handle(
      aggregate,
      'counter-a',
      { type: 'Add', data: { amount: 2 } },
      ctx(id),
    );
    expect(again.appended).toBe(false);
    expect(again.state.total).toBe(2);
    expect(await store.readStream('counter-a')).toHaveLength(1);
  });

  it('refuses with the domain error and appends nothing', async () => {
    await pipeline.handle(aggregate, 'counter-a', { type: 'Close', data: {} }, ctx());
    await expect(
      pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx()),
    ).rejects.toMatchObject({ code: 'invalid_transition' });
    expect(await store.readStream('counter-a')).toHaveLength(1);
  });

  it('sees what another writer appended (the cache is revision-checked)', async () => {
    const other = new CommandPipeline(store);
    await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
    await other.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 10 } }, ctx());
    const r = await pipeline.handle(
      aggregate,
      'counter-a',
      { type: 'Add', data: { amount: 100 } },
      ctx(),
    );
    expect(r.state.total).toBe(111);
  });

  describe('a command that changes nothing', () => {
    const noop = { type: 'Add', data: { amount: 0 } } as const;

    it('is answered from the cached state, reported once as a no-op, appending nothing', async () => {
      const first = await pipeline.handle(
        aggregate,
        'counter-a',
        { type: 'Add', data: { amount: 3 } },
        ctx(),
      );
      const outcomes: string[] = [];
      pipeline.onOutcome((o) => outcomes.push(`${o.command}:${o.result}`));
      const read = jest.spyOn(store, 'readStream');
      const r = await pipeline.handle(aggregate, 'counter-a', noop, ctx());
      expect(r).toEqual({
        events: [],
        state: { total: 3, closed: false },
        revision: 0,
        appended: false,
        position: LOG_START,
        headPosition: first.position,
      });
      expect(read).not.toHaveBeenCalled();
      expect(outcomes).toEqual(['Add:noop']);
      expect(await store.headPosition()).toBe(first.position);
    });

    it('is decided afresh when another writer appended since the cache was filled', async () => {
      await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
      // Cached here: open. Another process closes the counter; here the no-op would be refused.
      await new CommandPipeline(store).handle(
        aggregate,
        'counter-a',
        { type: 'Close', data: {} },
        ctx(),
      );
      await expect(pipeline.handle(aggregate, 'counter-a', noop, ctx())).rejects.toMatchObject({
        code: 'invalid_transition',
      });
    });

    it('waits for a command in flight on its stream and is decided on its outcome', async () => {
      await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
      const outcomes: string[] = [];
      pipeline.onOutcome((o) => outcomes.push(`${o.command}:${o.result}`));
      const close = pipeline.handle(aggregate, 'counter-a', { type: 'Close', data: {} }, ctx());
      const after = pipeline.handle(aggregate, 'counter-a', noop, ctx());
      await expect(close).resolves.toMatchObject({ appended: true });
      await expect(after).rejects.toMatchObject({ code: 'invalid_transition' });
      expect(outcomes).toEqual(['Close:ok', 'Add:refused']);
    });

    it('keeps the order of the commands that follow it on the stream', async () => {
      await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
      const order: string[] = [];
      pipeline.onOutcome((o) => order.push(`${o.command}:${o.result}`));
      await Promise.allSettled([
        pipeline.handle(aggregate, 'counter-a', noop, ctx()),
        pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 2 } }, ctx()),
        pipeline.handle(aggregate, 'counter-a', { type: 'Close', data: {} }, ctx()),
        pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 5 } }, ctx()),
      ]);
      expect(order).toEqual(['Add:noop', 'Add:ok', 'Close:ok', 'Add:refused']);
      expect((await new CommandPipeline(store).load(aggregate, 'counter-a')).state).toEqual({
        total: 3,
        closed: true,
      });
    });

    it('fails as before, counted as an error, when the store cannot confirm the head', async () => {
      await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
      const outcomes: string[] = [];
      pipeline.onOutcome((o) => outcomes.push(`${o.command}:${o.result}`));
      // Every way the store reads a head fails (one stream, or many at once).
      const down = [
        jest.spyOn(store, 'streamRevision').mockRejectedValue(new Error('store out of reach')),
        jest.spyOn(store, 'streamRevisions').mockImplementation(() => {
          throw new Error('store out of reach');
        }),
      ];
      await expect(pipeline.handle(aggregate, 'counter-a', noop, ctx())).rejects.toThrow(
        'store out of reach',
      );
      down.forEach((d) => d.mockRestore());
      expect(outcomes).toEqual(['Add:error']);
    });

    it('is refused as before when its cached state refuses it', async () => {
      await pipeline.handle(aggregate, 'counter-a', { type: 'Close', data: {} }, ctx());
      const outcomes: string[] = [];
      pipeline.onOutcome((o) => outcomes.push(`${o.command}:${o.result}`));
      await expect(pipeline.handle(aggregate, 'counter-a', noop, ctx())).rejects.toMatchObject({
        code: 'invalid_transition',
      });
      expect(outcomes).toEqual(['Add:refused']);
    });
  });

  it('runs racing commands on one stream one after another', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx()),
      ),
    );
    expect(results.every((r) => r.appended)).toBe(true);
    expect((await new CommandPipeline(store).load(aggregate, 'counter-a')).state.total).toBe(50);
  });

  it('re-decides on a revision conflict with another writer instead of overwriting', async () => {
    const a = new CommandPipeline(store);
    const b = new CommandPipeline(store);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? a : b).handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx()),
      ),
    );
    expect(results.every((r) => r.appended)).toBe(true);
    const fresh = await new CommandPipeline(store).load(aggregate, 'counter-a');
    expect(fresh.state.total).toBe(8);
    expect(fresh.revision).toBe(7);
  });

  it('gives up after bounded retries with a typed concurrency_conflict', async () => {
    await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
    await pipeline.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx());
    // Another process that always wins the race: every attempt conflicts.
    const stale = new CommandPipeline(store, { maxAttempts: 3 });
    const append = jest
      .spyOn(store, 'append')
      .mockRejectedValue(new ConcurrencyConflictError('counter-a', 1, 2));
    await expect(
      stale.handle(aggregate, 'counter-a', { type: 'Add', data: { amount: 1 } }, ctx()),
    ).rejects.toMatchObject({ code: 'concurrency_conflict' });
    expect(append).toHaveBeenCalledTimes(3);
    append.mockRestore();
    expect(await store.readStream('counter-a')).toHaveLength(2);
  });

  it('loads a stream as of a revision behind its head, over more than a page, and keeps the head cached', async () => {
    const add = { type: 'Add' as const, data: { amount: 1 } };
    for (let i = 0; i < 2503; i++) await pipeline.handle(aggregate, 'counter-a', add, ctx());
    const head = await pipeline.load(aggregate, 'counter-a');
    expect(head).toMatchObject({ revision: 2502, state: { total: 2503 } });
    const [at2000] = await store.readStream('counter-a', { fromRevision: 2000, limit: 1 });
    // Folded from the start, across three pages, and stopped at the revision.
    const then = await pipeline.loadAt(aggregate, 'counter-a', 2000);
    expect(then).toEqual({
      state: { total: 2001, closed: false },
      revision: 2000,
      position: at2000.position,
    });
    // At the head: the cached state itself; and the head is still what `load` gives.
    expect(await pipeline.loadAt(aggregate, 'counter-a', 2502)).toBe(head);
    expect(await pipeline.load(aggregate, 'counter-a')).toBe(head);
    // A pipeline with nothing cached folds to the revision too.
    const fresh = new CommandPipeline(store);
    expect(await fresh.loadAt(aggregate, 'counter-a', 0)).toMatchObject({
      revision: 0,
      state: { total: 1 },
    });
  });
});
