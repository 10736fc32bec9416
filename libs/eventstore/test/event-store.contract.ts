import { randomUUID } from 'node:crypto';
import { EventMetadata } from '@fleet/kernel';
import {
  ConcurrencyConflictError,
  EventStore,
  IdempotencyMismatchError,
  LOG_START,
  LogPosition,
  NewEvent,
  StoredEvent,
} from '../src/port';

const metadata = (over: Partial<EventMetadata> = {}): EventMetadata => ({
  correlationId: randomUUID(),
  causationId: randomUUID(),
  actor: { sub: 'admin-1', roles: ['admin'] },
  occurredAt: '2025-01-02T03:04:05.000Z',
  schemaVersion: 1,
  ...over,
});

const event = (type = 'TestHappened.v1', data: unknown = { n: 1 }): NewEvent => ({
  eventId: randomUUID(),
  type,
  data,
  metadata: metadata(),
});

/** Unique per test, so the suite also runs against a shared EventStoreDB. */
const stream = (category = 'test'): string => `${category}-${randomUUID().replace(/-/g, '')}`;

/** Every event in the log after `after`, paging through readAll. */
const readAllFrom = async (store: EventStore, after: LogPosition): Promise<StoredEvent[]> => {
  const all: StoredEvent[] = [];
  let from = after;
  while (true) {
    const page = await store.readAll({ after: from, limit: 500 });
    if (page.length === 0) return all;
    all.push(...page);
    from = page[page.length - 1].position;
  }
};

/** Runs the event store port's contract against one adapter. */
export function eventStoreContract(
  name: string,
  make: () => Promise<{ store: EventStore; cleanup(): Promise<void> }>,
): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('append with an expected revision', () => {
      it('creates a new stream with no_stream', async () => {
        const s = stream();
        const result = await store.append(s, [event(), event()], 'no_stream');
        expect(result.appended).toBe(true);
        expect(result.revision).toBe(1);
        const read = await store.readStream(s);
        expect(read.map((e) => e.revision)).toEqual([0, 1]);
        expect(result.position).toBe(read[1].position);
      });

      it('refuses a wrong expected revision and appends nothing', async () => {
        const s = stream();
        await store.append(s, [event()], 'no_stream');
        const head = await store.headPosition();
        await expect(store.append(s, [event()], 5)).rejects.toBeInstanceOf(
          ConcurrencyConflictError,
        );
        await expect(store.append(s, [event()], 'no_stream')).rejects.toBeInstanceOf(
          ConcurrencyConflictError,
        );
        expect(await store.streamRevision(s)).toBe(0);
        expect(await readAllFrom(store, head)).toEqual([]);
      });

      it('refuses an exact revision on a stream that does not exist', async () => {
        const s = stream();
        await expect(store.append(s, [event()], 0)).rejects.toBeInstanceOf(
          ConcurrencyConflictError,
        );
        expect(await store.streamRevision(s)).toBeNull();
      });

      it('appends at the exact revision', async () => {
        const s = stream();
        await store.append(s, [event()], 'no_stream');
        const result = await store.append(s, [event(), event()], 0);
        expect(result).toMatchObject({ revision: 2, appended: true });
        expect(await store.streamRevision(s)).toBe(2);
      });

      it("appends whatever the revision with 'any'", async () => {
        const s = stream();
        expect((await store.append(s, [event()], 'any')).revision).toBe(0);
        expect((await store.append(s, [event()], 'any')).revision).toBe(1);
      });

      it('lets exactly one of two racing no_stream appends win', async () => {
        const s = stream('node');
        const results = await Promise.allSettled([
          store.append(s, [event('NodeRegistered.v1', { by: 'a' })], 'no_stream'),
          store.append(s, [event('NodeRegistered.v1', { by: 'b' })], 'no_stream'),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyConflictError);
        expect(await store.readStream(s)).toHaveLength(1);
      });
    });

    describe('idempotency by event id', () => {
      it('appends nothing when the same ids are appended again, even with a stale revision', async () => {
        const s = stream();
        const events = [event(), event()];
        await store.append(s, events, 'no_stream');
        const head = await store.headPosition();

        const again = await store.append(s, events, 'no_stream');
        expect(again).toMatchObject({ appended: false, revision: 1 });
        const anyAgain = await store.append(s, events, 'any');
        expect(anyAgain.appended).toBe(false);
        await store.append(s, [event()], 1);
        const stale = await store.append(s, events, 0);
        expect(stale.appended).toBe(false);

        expect(await store.readStream(s)).toHaveLength(3);
        expect(await readAllFrom(store, head)).toHaveLength(1);
      });

      it('refuses an append whose ids are only partly stored', async () => {
        const s = stream();
        const first = event();
        await store.append(s, [first], 'no_stream');
        await expect(store.append(s, [first, event()], 0)).rejects.toBeInstanceOf(
          IdempotencyMismatchError,
        );
        await expect(store.append(s, [first, event()], 'any')).rejects.toBeInstanceOf(
          IdempotencyMismatchError,
        );
        expect(await store.readStream(s)).toHaveLength(1);
      });
    });

    describe('reading a stream', () => {
      it('reads from a revision with a limit', async () => {
        const s = stream();
        await store.append(
          s,
          [0, 1, 2, 3, 4].map((n) => event('TestHappened.v1', { n })),
          'no_stream',
        );
        const read = await store.readStream(s, { fromRevision: 2, limit: 2 });
        expect(read.map((e) => [e.revision, e.data])).toEqual([
          [2, { n: 2 }],
          [3, { n: 3 }],
        ]);
        expect(read.every((e) => e.streamId === s)).toBe(true);
        expect(await store.readStream(s, { fromRevision: 3 })).toHaveLength(2);
      });

      it('reports no revision and no events for a missing stream', async () => {
        const s = stream();
        expect(await store.streamRevision(s)).toBeNull();
        expect(await store.readStream(s)).toEqual([]);
      });

      it('round-trips data and metadata', async () => {
        const s = stream();
        const sent: NewEvent = {
          eventId: randomUUID(),
          type: 'NodeCordoned.v1',
          data: { nodeId: 'n-1', reason: 'maintenance', gpus: [{ uuid: 'GPU-1', model: 'H100' }] },
          metadata: metadata({ commandId: randomUUID() }),
        };
        const head = await store.headPosition();
        await store.append(s, [sent], 'no_stream');
        const [got] = await store.readStream(s);
        expect(got).toMatchObject({ ...sent, streamId: s, revision: 0 });
        expect(got.metadata).toEqual(sent.metadata);
        // Positions are opaque (on KurrentDB, byte offsets): read from one the store handed out.
        const fromAll = (await readAllFrom(store, head)).find((e) => e.eventId === sent.eventId);
        expect(fromAll?.position).toBe(got.position);
        expect(fromAll?.metadata).toEqual(sent.metadata);
      });
    });

    describe('reading all streams', () => {
      it('returns the global commit order across interleaved streams', async () => {
        const head = await store.headPosition();
        const a = stream();
        const b = stream();
        await store.append(a, [event('A.v1', { i: 0 })], 'no_stream');
        await store.append(b, [event('B.v1', { i: 1 })], 'no_stream');
        await store.append(a, [event('A.v1', { i: 2 }), event('A.v1', { i: 3 })], 0);
        await store.append(b, [event('B.v1', { i: 4 })], 0);

        const mine = (await readAllFrom(store, head)).filter(
          (e) => e.streamId === a || e.streamId === b,
        );
        expect(mine.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4]);
        for (let i = 1; i < mine.length; i++)
          expect(mine[i].position).toBeGreaterThan(mine[i - 1].position);
        expect(await store.headPosition()).toBe(mine[mine.length - 1].position);
      });

      it('pages with after and limit', async () => {
        const s = stream();
        const head = await store.headPosition();
        await store.append(
          s,
          [0, 1, 2, 3, 4].map((n) => event('TestHappened.v1', { n })),
          'no_stream',
        );
        const first = await store.readAll({ after: head, limit: 2 });
        expect(first).toHaveLength(2);
        const second = await store.readAll({ after: first[1].position, limit: 2 });
        expect(second).toHaveLength(2);
        expect(second[0].position).toBeGreaterThan(first[1].position);
        const mine = [...first, ...second].filter((e) => e.streamId === s);
        expect(mine.map((e) => e.revision)).toEqual([0, 1, 2, 3]);
      });

      it('filters by type', async () => {
        const s = stream();
        const head = await store.headPosition();
        const marker = randomUUID().slice(0, 8);
        const wanted = `Wanted${marker}.v1`;
        const other = `Other${marker}.v1`;
        const also = `AlsoWanted${marker}.v1`;
        await store.append(
          s,
          [event(wanted), event(other), event(also), event(other), event(wanted)],
          'no_stream',
        );
        const read = await store.readAll({ after: head, limit: 100, types: [wanted, also] });
        expect(read.map((e) => e.type)).toEqual([wanted, also, wanted]);
        expect(read.map((e) => e.revision)).toEqual([0, 2, 4]);
        const limited = await store.readAll({ after: head, limit: 1, types: [also] });
        expect(limited.map((e) => e.revision)).toEqual([2]);
      });

      it('reads after a position exclusively: a page ends where the next one starts', async () => {
        const s = stream();
        const head = await store.headPosition();
        await store.append(
          s,
          [0, 1, 2].map((n) => event('TestHappened.v1', { n })),
          'no_stream',
        );
        const mine = (await readAllFrom(store, head)).filter((e) => e.streamId === s);
        expect(mine.map((e) => e.revision)).toEqual([0, 1, 2]);
        const afterFirst = (await readAllFrom(store, mine[0].position)).filter(
          (e) => e.streamId === s,
        );
        expect(afterFirst.map((e) => e.revision)).toEqual([1, 2]);
        const afterLast = (await readAllFrom(store, mine[2].position)).filter(
          (e) => e.streamId === s,
        );
        expect(afterLast).toEqual([]);
      });

      it('counts the events after a position, up to a cap', async () => {
        const s = stream();
        const head = await store.headPosition();
        await store.append(
          s,
          [0, 1, 2, 3].map((n) => event('TestHappened.v1', { n })),
          'no_stream',
        );
        const [first] = await store.readStream(s, { limit: 1 });
        // Other writers of a shared server may add events: at least ours are counted.
        expect(await store.countAfter(head, 1000)).toBeGreaterThanOrEqual(4);
        expect(await store.countAfter(first.position, 1000)).toBeGreaterThanOrEqual(3);
        expect(await store.countAfter(head, 2)).toBe(2);
        expect(await store.countAfter(await store.headPosition(), 1000)).toBe(0);
      });

      it('reports the head position', async () => {
        const before = await store.headPosition();
        expect(before).toBeGreaterThanOrEqual(LOG_START);
        const result = await store.append(stream(), [event()], 'no_stream');
        const after = await store.headPosition();
        expect(after).toBeGreaterThan(before);
        expect(after).toBe(result.position);
      });
    });

    describe('watching', () => {
      it('calls the listener after an append', async () => {
        let calls = 0;
        let resolveCalled: () => void = () => undefined;
        const called = new Promise<void>((resolve) => (resolveCalled = resolve));
        const unsubscribe = store.watch(() => {
          calls++;
          resolveCalled();
        });
        try {
          // Give a remote subscription time to be established before appending.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await store.append(stream(), [event()], 'no_stream');
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            called,
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error('listener not called within 5 s')), 5000);
            }),
          ]).finally(() => clearTimeout(timer));
          expect(calls).toBeGreaterThan(0);
        } finally {
          unsubscribe();
        }
      });

      it('stops calling after unsubscribe', async () => {
        let calls = 0;
        const unsubscribe = store.watch(() => calls++);
        unsubscribe();
        await store.append(stream(), [event()], 'no_stream');
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(calls).toBe(0);
      });
    });

    it('answers ping when it can serve', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
