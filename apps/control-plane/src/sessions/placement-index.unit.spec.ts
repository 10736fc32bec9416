import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore, LogPosition, StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { SYSTEM_ACTOR } from '@fleet/kernel';
import { EmbeddedReadModelStore } from '@fleet/readmodels';
import { NODES, nodesProjection } from '../nodes';
import { gpuNodeDoc as node } from '../../../../test/support/node-docs';
import { PlacementIndex } from './placement-index';

const event = (position: number, streamId: string): StoredEvent => ({
  position: asLogPosition(position),
  eventId: `e-${position}`,
  streamId,
  revision: 0,
  type: 'NodeCapacityAllocated.v1',
  data: {},
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: SYSTEM_ACTOR,
    occurredAt: '2026-01-01T00:00:00.000Z',
    schemaVersion: 1,
  },
});

const demand = { kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount: 1 };

describe('the placement index', () => {
  const setup = async () => {
    const readModels = new EmbeddedReadModelStore();
    readModels.defineCollection(NODES);
    await readModels.commit(
      nodesProjection.name,
      [
        { op: 'upsert', collection: NODES, doc: node('a', 2) },
        { op: 'upsert', collection: NODES, doc: node('b', 4) },
      ],
      10,
    );
    const log: StoredEvent[] = [];
    const readAfter = async ({ after, limit }: { after?: LogPosition; limit: number }) =>
      log.filter((e) => e.position > (after ?? 0)).slice(0, limit);
    const events = { readAll: jest.fn(readAfter) };
    const runner = { readAll: jest.fn(readAfter) };
    const index = new PlacementIndex(
      readModels,
      events as unknown as EventStore,
      runner as unknown as SubscriptionRunner,
    );
    const hosts = async () => (await index.bestFit(demand, null, 10)).map((n) => n.hostname);
    return { readModels, log, events, runner, hosts };
  };

  describe('when the Nodes read model moved a little', () => {
    it('finds the changed nodes in the events the subscribers share, not with a query of the store', async () => {
      const { readModels, log, events, runner, hosts } = await setup();
      expect(await hosts()).toEqual(['a', 'b']);
      // a fills up: the projection wrote it at position 12 (11 is a session event).
      log.push(event(11, 'session-s1'), event(12, 'node-a'));
      await readModels.commit(
        nodesProjection.name,
        [{ op: 'upsert', collection: NODES, doc: node('a', 0) }],
        12,
      );
      expect(await hosts()).toEqual(['b']);
      expect(runner.readAll).toHaveBeenCalledWith({ after: 10, limit: 1000 });
      expect(events.readAll).not.toHaveBeenCalled();
    });
  });

  describe('when it is far behind the Nodes read model', () => {
    it('reads five pages of every event the subscribers share, then only node events from the store', async () => {
      const { readModels, log, events, runner, hosts } = await setup();
      expect(await hosts()).toEqual(['a', 'b']);
      // 5,000 session events (sparse positions) before the node's change.
      for (let i = 0; i < 5000; i++) log.push(event(11 + i * 3, `session-s${i}`));
      log.push(event(20_000, 'node-b'));
      await readModels.commit(
        nodesProjection.name,
        [{ op: 'upsert', collection: NODES, doc: node('b', 1) }],
        20_000,
      );
      expect(await hosts()).toEqual(['b', 'a']);
      expect(runner.readAll).toHaveBeenCalledTimes(5);
      expect(events.readAll).toHaveBeenCalledTimes(1);
      expect(events.readAll).toHaveBeenCalledWith(
        expect.objectContaining({ after: log[4999].position, types: expect.any(Array) }),
      );
    });
  });
});
