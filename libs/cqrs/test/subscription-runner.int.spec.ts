import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SYSTEM_ACTOR } from '@fleet/kernel';
import { SqliteEventStore } from '@fleet/eventstore/sqlite-event-store';
import { NewEvent, StoredEvent } from '@fleet/eventstore/port';
import { CheckpointStore, SqliteCheckpointStore } from '../src/checkpoint-store';
import { reactorSubscriber } from '../src/reactor';
import { SubscriptionRunner } from '../src/subscription-runner';

const event = (i: number): NewEvent => ({
  eventId: `00000000-0000-5000-8000-${String(i).padStart(12, '0')}`,
  type: 'Ticked.v1',
  data: { i },
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: SYSTEM_ACTOR,
    occurredAt: new Date(0).toISOString(),
    schemaVersion: 1,
  },
});

const waitFor = async (check: () => boolean, ms = 5000): Promise<void> => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('the subscription runner', () => {
  let dir: string;
  let store: SqliteEventStore;
  let checkpoints: SqliteCheckpointStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runner-'));
    store = new SqliteEventStore({ file: path.join(dir, 'events.db') });
    checkpoints = new SqliteCheckpointStore(path.join(dir, 'checkpoints.db'));
  });
  afterEach(async () => {
    await checkpoints.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const appendMany = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++)
      await store.append(`tick-${i % 3}`, [event(i)], 'any');
  };

  it('delivers every event once in global order and keeps the stream order', async () => {
    await appendMany(0, 50);
    const seen: StoredEvent[] = [];
    const runner = new SubscriptionRunner(store, { pageSize: 7 });
    await runner.add(
      reactorSubscriber({ name: 'r', react: async (e) => void seen.push(e) }, checkpoints),
    );
    await runner.start();
    await appendMany(50, 25);
    await runner.caughtUp();
    await runner.stop();
    expect(seen.map((e) => (e.data as { i: number }).i)).toEqual([...Array(75).keys()]);
    const positions = seen.map((e) => e.position);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('stops and forgets the subscribers removed, the others running on', async () => {
    const kept: number[] = [];
    const removed: number[] = [];
    const runner = new SubscriptionRunner(store, { pageSize: 7 });
    const reactor = (name: string, into: number[]) =>
      reactorSubscriber(
        { name, react: async (e) => void into.push((e.data as { i: number }).i) },
        checkpoints,
      );
    await runner.add(reactor('kept', kept));
    await runner.add(reactor('removed', removed));
    await runner.start();
    await appendMany(0, 10);
    await runner.caughtUp();
    const tenth = await store.headPosition();
    await runner.remove(['reactor:removed', 'reactor:unknown']);
    expect((await runner.status()).map((s) => s.name)).toEqual(['reactor:kept']);
    await appendMany(10, 10);
    await runner.caughtUp();
    expect(kept).toHaveLength(20);
    expect(removed).toHaveLength(10);
    // Its checkpoint stays where it stopped: added again, it resumes with the rest.
    expect(await checkpoints.load('removed')).toBe(tenth);
    await runner.add(reactor('removed', removed));
    await runner.caughtUp();
    expect(removed).toEqual(kept);
    await runner.stop();
  });

  it('restarted from its checkpoint neither skips nor repeats an event', async () => {
    await appendMany(0, 30);
    const seen: number[] = [];
    const react = async (e: StoredEvent) => void seen.push((e.data as { i: number }).i);
    const first = new SubscriptionRunner(store, { pageSize: 10 });
    await first.add(reactorSubscriber({ name: 'r', react }, checkpoints));
    await first.start();
    await first.caughtUp();
    await first.stop();
    await appendMany(30, 30);
    const second = new SubscriptionRunner(store, { pageSize: 10 });
    await second.add(reactorSubscriber({ name: 'r', react }, checkpoints));
    await second.start();
    await second.caughtUp();
    await second.stop();
    expect(seen).toEqual([...Array(60).keys()]);
  });

  describe('when a reactor handles many small pages', () => {
    const counting = () => {
      const writes: number[] = [];
      const store: CheckpointStore = {
        load: (name) => checkpoints.load(name),
        save: async (name, position) => {
          writes.push(position);
          await checkpoints.save(name, position);
        },
        close: async () => undefined,
      };
      return { writes, store };
    };

    it('writes its checkpoint at most once per window, and the latest once the window ends', async () => {
      const { writes, store: saving } = counting();
      const runner = new SubscriptionRunner(store, { pageSize: 1 });
      await runner.add(
        reactorSubscriber({ name: 'r', react: async () => undefined }, saving, {
          saveEveryMs: 300,
        }),
      );
      await runner.start();
      await appendMany(0, 20);
      await runner.caughtUp();
      const head = await store.headPosition();
      // 20 pages of one event each, handled well within one window: the first page is written
      // at once, the rest wait for the window to end.
      expect(writes.length).toBeLessThanOrEqual(2);
      await waitFor(() => writes[writes.length - 1] === head);
      expect(await checkpoints.load('r')).toBe(head);
      expect(writes.length).toBeLessThanOrEqual(3);
      await runner.stop();
    });

    it('writes the latest position when the runner stops within a window', async () => {
      const { writes, store: saving } = counting();
      const runner = new SubscriptionRunner(store, { pageSize: 1 });
      await runner.add(
        reactorSubscriber({ name: 'r', react: async () => undefined }, saving, {
          saveEveryMs: 60_000,
        }),
      );
      await runner.start();
      await appendMany(0, 10);
      await runner.caughtUp();
      const head = await store.headPosition();
      expect(await checkpoints.load('r')).toBeLessThan(head);
      await runner.stop();
      expect(await checkpoints.load('r')).toBe(head);
      expect(writes.length).toBe(2);
    });
  });

  it('retries a failing handler with backoff, shows it failing, and never skips the event', async () => {
    await appendMany(0, 5);
    let failuresLeft = 3;
    const seen: number[] = [];
    const errors: number[] = [];
    const runner = new SubscriptionRunner(store, {
      pageSize: 1,
      initialBackoffMs: 20,
      onError: (_name, _e, attempt) => errors.push(attempt),
    });
    await runner.add(
      reactorSubscriber(
        {
          name: 'flaky',
          react: async (e) => {
            const i = (e.data as { i: number }).i;
            if (i === 2 && failuresLeft-- > 0) throw new Error('downstream unavailable');
            seen.push(i);
          },
        },
        checkpoints,
      ),
    );
    await runner.start();
    await waitFor(() => errors.length >= 1);
    const [status] = await runner.status();
    expect(status.failing).toBe(true);
    expect(status.lastError).toBe('downstream unavailable');
    await runner.caughtUp();
    const [after] = await runner.status();
    expect(after).toMatchObject({ failing: false, lag: 0, consecutiveFailures: 0 });
    await runner.stop();
    expect(errors).toEqual([1, 2, 3]);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('reports lag while behind', async () => {
    await appendMany(0, 10);
    const runner = new SubscriptionRunner(store, { pageSize: 100 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    await runner.add(reactorSubscriber({ name: 'slow', react: () => gate }, checkpoints));
    await runner.start();
    const [status] = await runner.status();
    expect(status.lag).toBe(10);
    release();
    await runner.caughtUp();
    expect((await runner.status())[0].lag).toBe(0);
    await runner.stop();
  });
});
