import { ReadModelCheckpointStore, Projection } from '@fleet/cqrs';
import { SqliteEventStore, asLogPosition } from '@fleet/eventstore';
import { SYSTEM_ACTOR } from '@fleet/kernel';
import { EmbeddedReadModelStore } from '@fleet/readmodels';
import { rebuildReadModels } from './rebuild';

const counter: Projection = {
  name: 'counter',
  collections: [{ name: 'counts' }, { name: 'seen', insertOnly: true }],
  async apply(event, writer) {
    const doc = await writer.get<{ _id: string; n: number }>('counts', event.streamId);
    writer.upsert('counts', { _id: event.streamId, n: (doc?.n ?? 0) + 1 });
    writer.insert('seen', { _id: event.eventId, position: event.position });
  },
};

const metadata = {
  correlationId: 'c',
  causationId: 'c',
  actor: SYSTEM_ACTOR,
  occurredAt: '2026-12-02T10:00:00.000Z',
  schemaVersion: 1,
};

describe('rebuildReadModels', () => {
  let events: SqliteEventStore;
  let readModels: EmbeddedReadModelStore;
  beforeEach(async () => {
    events = new SqliteEventStore({ file: ':memory:' });
    readModels = new EmbeddedReadModelStore();
    for (let i = 0; i < 25; i++) {
      await events.append(
        `thing-${i % 3}`,
        [{ eventId: `e-${i}`, type: 'ThingHappened.v1', data: {}, metadata }],
        'any',
      );
    }
  });
  afterEach(async () => {
    await events.close();
    await readModels.close();
  });

  it('replays the whole log in pages, with each page committed with its checkpoint', async () => {
    const result = await rebuildReadModels(
      { eventStore: events, readModels, projections: [counter] },
      { pageSize: 4 },
    );
    const head = await events.headPosition();
    expect(result).toMatchObject({
      events: 25,
      pages: 7,
      position: head,
      projections: ['counter'],
      collections: { counts: 3, seen: 25 },
    });
    expect(await readModels.checkpoint('counter')).toBe(head);
    expect(await readModels.get('counts', 'thing-0')).toEqual({ _id: 'thing-0', n: 9 });
  });

  it('drops what was there before, so running it twice gives the same documents', async () => {
    const ports = { eventStore: events, readModels, projections: [counter] };
    await readModels.commit(
      'counter',
      [{ op: 'upsert', collection: 'counts', doc: { _id: 'x' } }],
      3,
    );
    await rebuildReadModels(ports);
    const first = await readModels.find('counts', {});
    await rebuildReadModels(ports, { pageSize: 1 });
    expect(await readModels.find('counts', {})).toEqual(first);
    expect(await readModels.get('counts', 'x')).toBeNull();
  });

  it('keeps reactor checkpoints that live in the read-model store across the reset', async () => {
    // MongoDB mode: reactors checkpoint into the read-model database, which the reset drops.
    const checkpoints = new ReadModelCheckpointStore(readModels);
    await checkpoints.save('notify-webhook', asLogPosition(17));
    await rebuildReadModels({
      eventStore: events,
      readModels,
      projections: [counter],
      reactorCheckpoints: { store: checkpoints, names: ['notify-webhook', 'never-ran'] },
    });
    expect(await checkpoints.load('notify-webhook')).toBe(17);
    expect(await checkpoints.load('never-ran')).toBe(0);
  });
});
