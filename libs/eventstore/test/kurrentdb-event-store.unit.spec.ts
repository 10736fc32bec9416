import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import {
  ANY,
  AllStreamJSONRecordedEvent,
  AllStreamResolvedEvent,
  AllStreamSubscription,
  AppendResult as ClientAppendResult,
  AppendToStreamOptions,
  BACKWARDS,
  END,
  EVENT_TYPE,
  EventData,
  Filter,
  KurrentDBClient,
  NO_STREAM,
  ReadAllOptions as ClientReadAllOptions,
  ReadStreamOptions as ClientReadStreamOptions,
  ResolvedEvent,
  START,
  STREAM_EXISTS,
  StreamDeletedError,
  StreamNotFoundError,
  StreamTombstonedError,
  SubscribeToAllOptions,
  UnavailableError as ClientUnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
// The client's own subscription class, fed by a stand-in gRPC stream: its events and errors
// reach the store exactly as a real connection's would.
import { Subscription } from '@kurrent/kurrentdb-client/dist/streams/utils/Subscription';
import { EventMetadata, UnavailableError } from '@fleet/kernel';
import {
  KurrentDbClientLike,
  KurrentDbEventStore,
  StreamDeletedInStoreError,
} from '../src/kurrentdb-event-store';
import {
  ConcurrencyConflictError,
  IdempotencyMismatchError,
  InvalidPositionError,
  LOG_START,
  LogPosition,
  NewEvent,
  asLogPosition,
} from '../src/port';

const metadata = (): EventMetadata => ({
  correlationId: randomUUID(),
  causationId: randomUUID(),
  actor: { sub: 'admin-1', roles: ['admin'] },
  occurredAt: '2025-01-02T03:04:05.000Z',
  schemaVersion: 1,
});

const event = (type = 'TestHappened.v1', data: unknown = { n: 1 }): NewEvent => ({
  eventId: randomUUID(),
  type,
  data,
  metadata: metadata(),
});

/** A gRPC error as `@grpc/grpc-js` hands it to the client. */
const grpcError = (code: number, details: string): Error =>
  Object.assign(new Error(`${code} ${details}`), {
    code,
    details,
    metadata: { getMap: () => ({}) },
  });
const GRPC_CANCELLED = 1;
const GRPC_UNAVAILABLE = 14;

/** The server side of one `subscribeToAll`: what the gRPC stream would carry. */
class FakeGrpcStream extends PassThrough {
  cancelled = false;

  constructor() {
    super({ objectMode: true });
  }

  confirm(): void {
    this.write({
      hasConfirmation: () => true,
      getConfirmation: () => ({ getSubscriptionId: () => 'subscription-1' }),
    });
  }

  deliver(resolved: AllStreamResolvedEvent): void {
    this.write({ hasEvent: () => true, getEvent: () => resolved });
  }

  breakOff(): void {
    this.emit('error', grpcError(GRPC_UNAVAILABLE, 'Connection dropped'));
  }

  /** What grpc-js does on `call.cancel()`. */
  cancel(): void {
    this.cancelled = true;
    this.emit('error', grpcError(GRPC_CANCELLED, 'Cancelled on client'));
    this.end();
  }
}

const matches = (filter: Filter | undefined, e: AllStreamJSONRecordedEvent): boolean => {
  if (!filter) return true;
  const subject = filter.filterOn === EVENT_TYPE ? e.type : e.streamId;
  if ('regex' in filter) return new RegExp(filter.regex).test(subject);
  return filter.prefixes.some((prefix) => subject.startsWith(prefix));
};

/**
 * A KurrentDB as the client presents it: its methods are jest stubs answering with the
 * client's result shapes and throwing the client's error classes, as its gRPC and native
 * readers do. Positions are sparse byte offsets with commit == prepare.
 */
class FakeKurrentDb {
  readonly log: AllStreamJSONRecordedEvent[] = [];
  readonly tombstoned = new Set<string>();
  readonly grpcStreams: FakeGrpcStream[] = [];
  private nextPosition = 4_096n;

  write(
    streamId: string,
    type: string,
    data: unknown = {},
    meta: unknown = {},
    id: string = randomUUID(),
  ): AllStreamJSONRecordedEvent {
    const position = { commit: this.nextPosition, prepare: this.nextPosition };
    this.nextPosition += 137n + BigInt(this.log.length % 5) * 64n;
    const revision = this.log.filter((e) => e.streamId === streamId).length;
    const recorded = {
      streamId,
      id,
      isJson: true,
      revision: BigInt(revision),
      type,
      created: new Date(0),
      data,
      metadata: meta,
      position,
    } as AllStreamJSONRecordedEvent;
    this.log.push(recorded);
    return recorded;
  }

  revisionOf(streamId: string): bigint | typeof NO_STREAM {
    const n = this.log.filter((e) => e.streamId === streamId).length;
    return n === 0 ? NO_STREAM : BigInt(n - 1);
  }

  readonly appendToStream = jest.fn(
    async (
      streamName: string,
      events: EventData | EventData[],
      options: AppendToStreamOptions = {},
    ): Promise<ClientAppendResult> => {
      if (this.tombstoned.has(streamName)) throw StreamDeletedError.fromStreamName(streamName);
      const current = this.revisionOf(streamName);
      const expected = options.streamState ?? ANY;
      const ok =
        expected === ANY ||
        (expected === NO_STREAM
          ? current === NO_STREAM
          : expected === STREAM_EXISTS
            ? current !== NO_STREAM
            : current === expected);
      if (!ok) throw new WrongExpectedVersionError(undefined, { streamName, expected, current });
      let last: AllStreamJSONRecordedEvent | undefined;
      for (const e of Array.isArray(events) ? events : [events]) {
        last = this.write(streamName, e.type, e.data, e.metadata, e.id);
      }
      return {
        success: true,
        nextExpectedRevision: last?.revision ?? -1n,
        position: last?.position,
      };
    },
  );

  readonly readStream = jest.fn((streamName: string, options: ClientReadStreamOptions = {}) =>
    this.streamReader(streamName, options),
  );

  private async *streamReader(
    streamName: string,
    options: ClientReadStreamOptions,
  ): AsyncIterableIterator<ResolvedEvent> {
    if (this.tombstoned.has(streamName)) throw StreamDeletedError.fromStreamName(streamName);
    const events = this.log.filter((e) => e.streamId === streamName);
    if (events.length === 0) throw new StreamNotFoundError(undefined, streamName);
    const backwards = options.direction === BACKWARDS;
    const from = options.fromRevision ?? (backwards ? END : START);
    const ordered = backwards ? [...events].reverse() : events;
    const selected =
      from === START || from === END
        ? ordered
        : ordered.filter((e) => (backwards ? e.revision <= from : e.revision >= from));
    yield* selected
      .slice(0, Number(options.maxCount ?? Number.MAX_SAFE_INTEGER))
      .map((e) => ({ event: e }));
  }

  readonly readAll = jest.fn((options: ClientReadAllOptions = {}) => this.allReader(options));

  private async *allReader(
    options: ClientReadAllOptions,
  ): AsyncIterableIterator<AllStreamResolvedEvent> {
    const backwards = options.direction === BACKWARDS;
    const from = options.fromPosition ?? (backwards ? END : START);
    let events = backwards ? [...this.log].reverse() : this.log;
    if (typeof from === 'object') {
      const at = this.log.findIndex(
        (e) => e.position.commit === from.commit && e.position.prepare === from.prepare,
      );
      // What the native reader throws for the server's INVALID_ARGUMENT.
      if (at < 0) throw new UnknownError(undefined, 'Trying to read from an invalid position.');
      events = backwards ? this.log.slice(0, at + 1).reverse() : this.log.slice(at);
    }
    const max = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    let sent = 0;
    for (const e of events) {
      if (sent === max) return;
      if (!matches(options.filter, e)) continue;
      sent++;
      yield { event: e, commitPosition: e.position.commit };
    }
  }

  readonly subscribeToAll = jest.fn((_options?: SubscribeToAllOptions): AllStreamSubscription => {
    const grpc = new FakeGrpcStream();
    this.grpcStreams.push(grpc);
    return new Subscription<AllStreamResolvedEvent>(
      async () =>
        grpc as unknown as Awaited<ReturnType<ConstructorParameters<typeof Subscription>[0]>>,
      (resolved) => resolved as unknown as AllStreamResolvedEvent,
      {},
    );
  });

  readonly dispose = jest.fn(async (): Promise<void> => undefined);

  client(): KurrentDbClientLike {
    return {
      appendToStream: this.appendToStream,
      // The client's readStream is generic in the event type; this one answers the default.
      readStream: this.readStream as unknown as KurrentDBClient['readStream'],
      readAll: this.readAll,
      subscribeToAll: this.subscribeToAll,
      dispose: this.dispose,
    };
  }
}

/** A read the client fails at its first step, as its readers do. */
const failing = <T>(error: Error): AsyncIterableIterator<T> => {
  const iterator: AsyncIterableIterator<T> = {
    next: () => Promise.reject(error),
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
};

const until = async (condition: () => boolean, ms = 2000): Promise<void> => {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > ms) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

describe('KurrentDbEventStore against the client library', () => {
  let db: FakeKurrentDb;
  let logged: Array<{ message: string; error: unknown }>;
  let store: KurrentDbEventStore;

  beforeEach(() => {
    db = new FakeKurrentDb();
    logged = [];
    store = new KurrentDbEventStore(db.client(), {
      log: (message, error) => logged.push({ message, error }),
      resubscribeMs: 5,
      resubscribeMaxMs: 20,
    });
  });

  afterEach(async () => {
    await store.close();
  });

  describe('appending', () => {
    it('writes with the stream state asked for and answers with the commit position', async () => {
      const result = await store.append('node-a', [event(), event()], 'no_stream');
      expect(db.appendToStream.mock.calls[0][2]).toEqual({ streamState: NO_STREAM });
      expect(result).toEqual({
        revision: 1,
        position: Number(db.log[1].position.commit),
        appended: true,
      });
      await store.append('node-a', [event()], 1);
      expect(db.appendToStream.mock.calls[1][2]).toEqual({ streamState: 1n });
    });

    it('maps a wrong expected version to ConcurrencyConflictError with the actual revision', async () => {
      await store.append('node-a', [event(), event(), event()], 'no_stream');
      const refused = store.append('node-a', [event()], 0);
      await expect(refused).rejects.toBeInstanceOf(ConcurrencyConflictError);
      await expect(store.append('node-a', [event()], 0)).rejects.toMatchObject({
        streamId: 'node-a',
        expected: 0,
        actual: 2,
      });
      await expect(store.append('node-b', [event()], 4)).rejects.toMatchObject({ actual: null });
      await expect(store.append('node-a', [event()], 'no_stream')).rejects.toMatchObject({
        actual: 2,
      });
      expect(db.log).toHaveLength(3);
    });

    it('reads the actual revision when the URL asks the client not to throw on a conflict', async () => {
      await store.append('node-a', [event(), event()], 'no_stream');
      // What a batched append answers under throwOnAppendFailure=false: a revision of 1 for any.
      db.appendToStream.mockResolvedValueOnce({
        success: false,
        nextExpectedRevision: 1n,
        position: undefined,
      });
      await expect(store.append('node-a', [event()], 0)).rejects.toMatchObject({ actual: 1 });
    });

    it('answers an idempotent replay with appended: false, whatever the expected revision', async () => {
      const events = [event(), event()];
      const first = await store.append('node-a', events, 'no_stream');
      const again = await store.append('node-a', events, 'no_stream');
      expect(again).toEqual({ revision: 1, position: first.position, appended: false });
      expect(db.appendToStream).toHaveBeenCalledTimes(1);
      expect(db.log).toHaveLength(2);
    });

    it('answers a replay that raced past the tail check with appended: false', async () => {
      const events = [event()];
      const first = await store.append('node-a', events, 'no_stream');
      // Another replica wrote the same ids between the check and the write.
      db.readStream.mockImplementationOnce(() =>
        failing(new StreamNotFoundError(undefined, 'node-a')),
      );
      const again = await store.append('node-a', events, 'no_stream');
      expect(again).toEqual({ revision: 0, position: first.position, appended: false });
      expect(db.appendToStream).toHaveBeenCalledTimes(2);
    });

    it('answers a replay the server acknowledged without a position with the stored head', async () => {
      const events = [event()];
      const first = await store.append('node-a', events, 'no_stream');
      db.readStream.mockImplementationOnce(() =>
        failing(new StreamNotFoundError(undefined, 'node-a')),
      );
      db.appendToStream.mockResolvedValueOnce({
        success: true,
        nextExpectedRevision: 0n,
        position: undefined,
      });
      expect(await store.append('node-a', events, 'no_stream')).toEqual({
        revision: 0,
        position: first.position,
        appended: false,
      });
    });

    it('refuses an append whose ids are only partly stored', async () => {
      const first = event();
      await store.append('node-a', [first], 'no_stream');
      await expect(store.append('node-a', [first, event()], 0)).rejects.toBeInstanceOf(
        IdempotencyMismatchError,
      );
      expect(db.log).toHaveLength(1);
    });

    it('stores $correlationId and $causationId beside our metadata, and reads back ours only', async () => {
      const sent = event();
      await store.append('node-a', [sent], 'no_stream');
      const written = db.log[0].metadata as Record<string, unknown>;
      expect(written).toEqual({
        ...sent.metadata,
        $correlationId: sent.metadata.correlationId,
        $causationId: sent.metadata.causationId,
      });
      const [read] = await store.readStream('node-a');
      expect(read.metadata).toEqual(sent.metadata);
      const [fromAll] = await store.readAll({ limit: 1 });
      expect(fromAll.metadata).toEqual(sent.metadata);
    });

    it('turns the client being unable to reach the server into UnavailableError (503)', async () => {
      db.appendToStream.mockRejectedValueOnce(
        new ClientUnavailableError(undefined, 'failed to connect'),
      );
      const failed = store.append('node-a', [event()], 'no_stream');
      await expect(failed).rejects.toBeInstanceOf(UnavailableError);
      await expect(failed).rejects.toMatchObject({ dependency: 'event store (KurrentDB)' });
    });
  });

  describe('a stream deleted in KurrentDB by hand', () => {
    beforeEach(async () => {
      await store.append('node-a', [event()], 'no_stream');
      db.tombstoned.add('node-a');
    });

    it('refuses reads and appends with StreamDeletedInStoreError naming the stream', async () => {
      for (const attempt of [
        store.readStream('node-a'),
        store.streamRevision('node-a'),
        store.append('node-a', [event()], 'any'),
      ]) {
        await expect(attempt).rejects.toBeInstanceOf(StreamDeletedInStoreError);
        await expect(attempt).rejects.toMatchObject({ streamId: 'node-a' });
      }
    });

    it('maps the newer protocol’s StreamTombstonedError the same way', async () => {
      db.tombstoned.delete('node-a');
      db.appendToStream.mockRejectedValueOnce(
        new StreamTombstonedError(
          grpcError(9, 'stream tombstoned') as ConstructorParameters<
            typeof StreamTombstonedError
          >[0],
          { stream: 'node-a' },
        ),
      );
      await expect(store.append('node-a', [event()], 0)).rejects.toBeInstanceOf(
        StreamDeletedInStoreError,
      );
    });
  });

  describe('reading $all', () => {
    beforeEach(async () => {
      db.write('$et-TestHappened.v1', '$>');
      await store.append('node-a', [event('Wanted.v1', { i: 0 })], 'no_stream');
      db.write('$stats-127.0.0.1:2113', '$statsCollected');
      await store.append('node-b', [event('Other.v1', { i: 1 })], 'no_stream');
      await store.append(
        'node-a',
        [event('AlsoWanted.v1', { i: 2 }), event('Other.v1', { i: 3 })],
        0,
      );
      await store.append('node-b', [event('Wanted.v1', { i: 4 })], 0);
    });

    const ours = () => db.log.filter((e) => !e.streamId.startsWith('$'));

    it('reads from the start without system events', async () => {
      const read = await store.readAll({ limit: 100 });
      expect(read.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4]);
      expect(read.map((e) => e.position)).toEqual(ours().map((e) => Number(e.position.commit)));
      expect(db.readAll.mock.calls[0][0]).toMatchObject({ fromPosition: START });
      expect(await store.readAll({ after: LOG_START, limit: 1 })).toEqual([read[0]]);
    });

    it('is exclusive of `after`: reads from that event and drops it', async () => {
      const all = await store.readAll({ limit: 100 });
      const after = all[1].position;
      const read = await store.readAll({ after, limit: 2 });
      expect(read.map((e) => e.position)).toEqual([all[2].position, all[3].position]);
      expect(db.readAll.mock.calls[1][0]).toMatchObject({
        fromPosition: { commit: BigInt(after), prepare: BigInt(after) },
        maxCount: 3,
      });
      expect(await store.readAll({ after: all[4].position, limit: 10 })).toEqual([]);
    });

    it('pages through the whole log by the last position read, with no gap and no repeat', async () => {
      const all = await store.readAll({ limit: 100 });
      const paged = [];
      let after: LogPosition | undefined;
      for (;;) {
        const page = await store.readAll({ after, limit: 2 });
        if (page.length === 0) break;
        paged.push(...page);
        after = page[page.length - 1].position;
      }
      expect(paged).toEqual(all);
    });

    it('filters by type on the server, in one read, exactly by name', async () => {
      db.write('node-c', 'Wanted.v10'); // a prefix match that is not the type
      const read = await store.readAll({ limit: 10, types: ['Wanted.v1', 'AlsoWanted.v1'] });
      expect(read.map((e) => (e.data as { i: number }).i)).toEqual([0, 2, 4]);
      expect(db.readAll).toHaveBeenCalledTimes(1);
      expect(db.readAll.mock.calls[0][0]).toEqual({
        fromPosition: START,
        maxCount: 11,
        filter: expect.objectContaining({
          filterOn: EVENT_TYPE,
          regex: '^(?:Wanted\\.v1|AlsoWanted\\.v1)$',
        }),
      });
    });

    it('stops a typed read at its limit, and continues it after the last event', async () => {
      const [first] = await store.readAll({ limit: 1, types: ['Wanted.v1'] });
      expect((first.data as { i: number }).i).toBe(0);
      const rest = await store.readAll({ after: first.position, limit: 5, types: ['Wanted.v1'] });
      expect(rest.map((e) => (e.data as { i: number }).i)).toEqual([4]);
      expect(await store.readAll({ limit: 5, types: [] })).toEqual([]);
    });

    it('reads on past events of system streams that the type filter lets through', async () => {
      for (let i = 0; i < 3; i++) db.write(`$projections-p${i}`, 'NotSystemTyped');
      await store.append('node-c', [event('Wanted.v1', { i: 5 })], 'no_stream');
      const start = (await store.readAll({ limit: 100 }))[3].position;
      db.readAll.mockClear();
      const read = await store.readAll({ after: start, limit: 2 });
      expect(read.map((e) => (e.data as { i: number }).i)).toEqual([4, 5]);
      expect(db.readAll.mock.calls.length).toBeGreaterThan(1);
    });

    it('refuses a position that is no event’s with InvalidPositionError', async () => {
      const all = await store.readAll({ limit: 100 });
      // Within a record: the server refuses it.
      const inside = asLogPosition(all[2].position + 1);
      const refused = store.readAll({ after: inside, limit: 10 });
      await expect(refused).rejects.toBeInstanceOf(InvalidPositionError);
      await expect(refused).rejects.toMatchObject({ position: inside });
      // Not a position at all: refused before asking the server.
      db.readAll.mockClear();
      for (const after of [-1, 1.5, Number.NaN]) {
        await expect(
          store.readAll({ after: asLogPosition(after), limit: 1 }),
        ).rejects.toBeInstanceOf(InvalidPositionError);
      }
      expect(db.readAll).not.toHaveBeenCalled();
    });

    it('turns an unreachable server into UnavailableError', async () => {
      db.readAll.mockImplementationOnce(() =>
        failing(new ClientUnavailableError(undefined, 'connection refused')),
      );
      await expect(store.readAll({ limit: 1 })).rejects.toBeInstanceOf(UnavailableError);
    });

    it('reports the newest event of ours as the head, asking the server to skip system events', async () => {
      db.write('$stats-127.0.0.1:2113', '$statsCollected');
      expect(await store.headPosition()).toBe(Number(ours()[4].position.commit));
      expect(db.readAll.mock.calls[0][0]).toMatchObject({
        direction: BACKWARDS,
        fromPosition: END,
        filter: { filterOn: EVENT_TYPE, regex: '^[^$].*' },
      });
    });
  });

  it('reports a head of 0 on an empty log', async () => {
    expect(await store.headPosition()).toBe(0);
  });

  it('reads a stream from a revision with a limit, and nothing of a missing one', async () => {
    await store.append(
      'node-a',
      [0, 1, 2, 3].map((i) => event('T.v1', { i })),
      'no_stream',
    );
    const read = await store.readStream('node-a', { fromRevision: 1, limit: 2 });
    expect(read.map((e) => [e.revision, e.data])).toEqual([
      [1, { i: 1 }],
      [2, { i: 2 }],
    ]);
    expect(await store.readStream('node-z')).toEqual([]);
    expect(await store.streamRevision('node-z')).toBeNull();
    expect(await store.streamRevision('node-a')).toBe(3);
  });

  describe('watching', () => {
    let unhandled: unknown[];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };

    beforeEach(() => {
      unhandled = [];
      process.on('unhandledRejection', onUnhandled);
    });

    afterEach(() => {
      process.off('unhandledRejection', onUnhandled);
      expect(unhandled).toEqual([]);
    });

    it('subscribes from the end without system events and calls the listener per event', async () => {
      let calls = 0;
      const stop = store.watch(() => calls++);
      expect(db.subscribeToAll.mock.calls[0][0]).toMatchObject({
        fromPosition: END,
        filter: { filterOn: EVENT_TYPE, regex: '^[^$].*' },
      });
      const [grpc] = db.grpcStreams;
      grpc.confirm();
      grpc.deliver({ event: db.write('node-a', 'T.v1') });
      await until(() => calls === 1);
      stop();
      await until(() => grpc.cancelled);
    });

    it('resubscribes after the subscription errors, logging it once, and tells readers to catch up', async () => {
      let calls = 0;
      const stop = store.watch(() => calls++);
      const [first] = db.grpcStreams;
      first.confirm();
      await new Promise((resolve) => setImmediate(resolve));
      first.breakOff();
      // Told at once: events may have been missed while the subscription was down.
      await until(() => calls === 1);
      expect(logged).toHaveLength(1);
      expect(logged[0].message).toMatch(
        /event store \(KurrentDB\): the subscription to \$all dropped .*resubscribing in 5 ms/,
      );
      expect(logged[0].error).toBeInstanceOf(ClientUnavailableError);
      await until(() => first.cancelled);

      await until(() => db.subscribeToAll.mock.calls.length === 2);
      const second = db.grpcStreams[1];
      second.confirm();
      await until(() => calls === 2); // live again: catch up once more
      second.deliver({ event: db.write('node-a', 'T.v1') });
      await until(() => calls === 3);
      stop();
    });

    it('resubscribes when the server ends the subscription', async () => {
      let calls = 0;
      const stop = store.watch(() => calls++);
      db.grpcStreams[0].end();
      await until(() => db.subscribeToAll.mock.calls.length === 2);
      expect(logged[0].message).toMatch(/dropped \(the server ended it\)/);
      db.grpcStreams[1].confirm();
      db.grpcStreams[1].deliver({ event: db.write('node-a', 'T.v1') });
      await until(() => calls >= 2);
      stop();
    });

    it('keeps trying, with a growing wait, while subscribing itself throws', async () => {
      const real = db.subscribeToAll.getMockImplementation();
      db.subscribeToAll.mockImplementation(() => {
        throw new ClientUnavailableError(undefined, 'no connection');
      });
      const stop = store.watch(() => undefined);
      await until(() => db.subscribeToAll.mock.calls.length >= 3);
      expect(logged[0].message).toMatch(/resubscribing in 5 ms/);
      db.subscribeToAll.mockImplementation(real);
      await until(() => db.grpcStreams.length === 1);
      stop();
    });

    it('logs a listener that throws instead of dropping the subscription', async () => {
      const stop = store.watch(() => {
        throw new Error('listener failed');
      });
      db.grpcStreams[0].confirm();
      db.grpcStreams[0].deliver({ event: db.write('node-a', 'T.v1') });
      await until(() => logged.length === 1);
      expect(logged[0].message).toMatch(/a listener of new events threw/);
      expect(db.subscribeToAll).toHaveBeenCalledTimes(1);
      stop();
    });

    it('stops: no call and no new subscription after the unsubscribe', async () => {
      let calls = 0;
      const stop = store.watch(() => calls++);
      stop();
      await until(() => db.grpcStreams[0].cancelled);
      db.grpcStreams[0].breakOff();
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(db.subscribeToAll).toHaveBeenCalledTimes(1);
      expect(calls).toBe(0);
    });
  });

  it('closes its subscriptions and the client', async () => {
    store.watch(() => undefined);
    await store.close();
    await until(() => db.grpcStreams[0].cancelled);
    expect(db.dispose).toHaveBeenCalled();
  });
});
