import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectionSubscriber } from '@fleet/cqrs';
import { SqliteEventStore } from '@fleet/eventstore';
import { EventStore, StoredEvent } from '@fleet/eventstore/port';
import {
  EmbeddedReadModelStore,
  InsertOnlyViolationError,
  ReadModelStore,
} from '@fleet/readmodels';
import { appendSession, placement } from '../../../../test/support/session-events';
import { sessionCodec } from '../sessions';
import { segmentsOf } from './billing-line';
import { recordsMatching } from './billing-verify';
import {
  BILLING_OPEN_SEGMENTS,
  BILLING_RECORDS,
  BillingRecordDoc,
  billingProjection,
} from './billing.projection';

const T = (min: number, sec = 0) => new Date(Date.UTC(2026, 11, 2, 10, min, sec)).toISOString();

/** Replays the log into the billing projection in pages of `pageSize`, as the runner would. */
const replay = async (events: EventStore, store: ReadModelStore, pageSize = 1000) => {
  const subscriber = projectionSubscriber(billingProjection, store);
  let after = await subscriber.loadCheckpoint();
  for (;;) {
    const page = await events.readAll({ after, limit: pageSize });
    if (page.length === 0) return;
    await subscriber.handle(page);
    after = page[page.length - 1].position;
    await subscriber.saveCheckpoint(after);
  }
};

/** Hands pages to the projection again without moving the checkpoint first: redelivery. */
const redeliver = async (events: EventStore, store: ReadModelStore, pageSize: number) => {
  const subscriber = projectionSubscriber(billingProjection, store);
  const all = await events.readAll({ limit: 100_000 });
  for (let i = 0; i < all.length; i += pageSize) {
    const page = all.slice(i, i + pageSize);
    await subscriber.handle(page);
    await subscriber.saveCheckpoint(page[page.length - 1].position);
  }
};

const allRecords = (store: ReadModelStore) =>
  store.find<BillingRecordDoc>(BILLING_RECORDS, {}, { sort: { from: 1 }, limit: 1000 });

describe('billing projection', () => {
  let dir: string;
  let events: SqliteEventStore;
  let closing: string[];

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'billing-proj-'));
    events = new SqliteEventStore({ file: path.join(dir, 'events.db') });
    const ids = await appendSession(events, 's1', [
      { requested: T(0), owner: 'alice' },
      { started: T(0) },
      { paused: T(10) },
      { resumeRequested: T(20) },
      { resumed: T(25), placement: placement({ nodeId: 'n2', gpus: ['GPU-9'], units: 1 }) },
      { terminated: T(45) },
    ]);
    closing = [ids[2], ids[5]];
    await appendSession(events, 's2', [
      { requested: T(1), owner: 'bob' },
      { started: T(1) },
      { terminated: T(31), endedAt: T(6), reason: 'node_offline' },
    ]);
    // Still running: no record yet, an open segment.
    await appendSession(events, 's3', [{ requested: T(2), owner: 'bob' }, { started: T(2) }]);
  });
  afterEach(async () => {
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records one line per closed segment, keyed by the closing event, as segmentsOf computes it', async () => {
    const store = new EmbeddedReadModelStore();
    await replay(events, store);
    const stored = await recordsMatching(store, { sessionId: 's1' });
    expect(stored.map((r) => r.recordId)).toEqual(closing);
    const log: StoredEvent[] = await events.readStream('session-s1');
    const lines = segmentsOf(log.map((e) => sessionCodec.decode(e.type, e.data)!));
    expect(stored).toEqual(lines.map((l, i) => ({ recordId: closing[i], ...l })));
    expect(stored.map((r) => [r.seconds, r.amount])).toEqual([
      [600, 1200],
      [1200, 1200],
    ]);
    expect(await recordsMatching(store, { sessionId: 's2' })).toEqual([
      expect.objectContaining({ owner: 'bob', from: T(1), to: T(6), amount: 600 }),
    ]);
    expect(await store.get(BILLING_OPEN_SEGMENTS, 's1')).toBeNull();
    expect(await store.get(BILLING_OPEN_SEGMENTS, 's3')).toMatchObject({ from: T(2) });
  });

  it('is refused any upsert or delete of a billing record by the store', async () => {
    const store = new EmbeddedReadModelStore();
    await replay(events, store);
    const [doc] = (await allRecords(store)).items;
    await expect(
      store.commit(
        'billing',
        [{ op: 'upsert', collection: BILLING_RECORDS, doc: { ...doc, amount: 0 } }],
        99,
      ),
    ).rejects.toBeInstanceOf(InsertOnlyViolationError);
    await expect(
      store.commit('billing', [{ op: 'delete', collection: BILLING_RECORDS, id: doc._id }], 99),
    ).rejects.toBeInstanceOf(InsertOnlyViolationError);
    // A different document under an existing id is refused too; the same one is a no-op.
    await expect(
      store.commit(
        'billing',
        [{ op: 'insert', collection: BILLING_RECORDS, doc: { ...doc, amount: 1 } }],
        99,
      ),
    ).rejects.toBeInstanceOf(InsertOnlyViolationError);
    await store.commit('billing', [{ op: 'insert', collection: BILLING_RECORDS, doc }], 99);
    expect((await allRecords(store)).items).toContainEqual(doc);
  });

  it.each([1, 2, 3, 1000])(
    'yields identical records when the log is delivered twice (pages of %i)',
    async (pageSize) => {
      const once = new EmbeddedReadModelStore();
      await replay(events, once);
      const twice = new EmbeddedReadModelStore();
      await redeliver(events, twice, pageSize);
      // Every page again, on top of what it already wrote (checkpoints not trusted).
      await redeliver(events, twice, pageSize);
      expect((await allRecords(twice)).items).toEqual((await allRecords(once)).items);
      expect(await twice.find(BILLING_OPEN_SEGMENTS, {})).toEqual(
        await once.find(BILLING_OPEN_SEGMENTS, {}),
      );
    },
  );

  it('skips a redelivered close whose session has reopened since', async () => {
    const store = new EmbeddedReadModelStore();
    const subscriber = projectionSubscriber(billingProjection, store);
    const log = await events.readStream('session-s1');
    const upToResumed = log.slice(0, 5); // requested … resumed
    await subscriber.handle(upToResumed);
    await subscriber.saveCheckpoint(upToResumed[4].position);
    const before = (await allRecords(store)).items;
    // The pause again, after the resume is stored: it must not close the new segment.
    await subscriber.handle([log[2]]);
    await subscriber.saveCheckpoint(upToResumed[4].position);
    expect((await allRecords(store)).items).toEqual(before);
    expect(await store.get(BILLING_OPEN_SEGMENTS, 's1')).toMatchObject({ from: T(25) });
  });

  it('ignores node events: deleting the node leaves the records as they were', async () => {
    const store = new EmbeddedReadModelStore();
    await replay(events, store);
    const before = (await allRecords(store)).items;
    await events.append(
      'node-n1',
      [
        {
          eventId: 'node-deleted-1',
          type: 'NodeDeleted.v1',
          data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', at: T(50) },
          metadata: {
            correlationId: 'c',
            causationId: 'c',
            actor: { sub: 'admin', roles: ['admin'] },
            occurredAt: T(50),
            schemaVersion: 1,
          },
        },
      ],
      'any',
    );
    await replay(events, store);
    expect(await store.checkpoint('billing')).toBe(await events.headPosition());
    expect((await allRecords(store)).items).toEqual(before);
  });
});
