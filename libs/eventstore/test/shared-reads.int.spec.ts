import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOG_START, NewEvent, StoredEvent } from '../src/port';
import { SharedReadsEventStore } from '../src/shared-reads';
import { SqliteEventStore } from '../src/sqlite-event-store';
import { eventStoreContract } from './event-store.contract';

const open = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `shared-reads-${randomUUID().slice(0, 8)}-`));
  const inner = new SqliteEventStore({ file: path.join(dir, 'events.db'), pollMs: 50 });
  return {
    inner,
    store: new SharedReadsEventStore(inner, 50),
    cleanup: async () => {
      await inner.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

eventStoreContract('SharedReadsEventStore over SqliteEventStore', async () => open());

const event = (): NewEvent => ({
  eventId: randomUUID(),
  type: 'TestHappened.v1',
  data: { n: Math.random() },
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: { sub: 't', roles: [] },
    occurredAt: new Date(0).toISOString(),
    schemaVersion: 1,
    commandId: randomUUID(),
  },
});

describe('SharedReadsEventStore', () => {
  it('gives readers that follow notifications exactly the log, whatever the interleaving', async () => {
    const { inner, store, cleanup } = open();
    try {
      const readers = Array.from({ length: 6 }, (_, i) => ({
        checkpoint: LOG_START,
        seen: [] as StoredEvent[],
        limit: [3, 7, 1000, 2, 50, 11][i],
      }));
      const wakes: Array<() => void> = [];
      const unwatch = store.watch(() => wakes.splice(0).forEach((w) => w()));
      let appending = true;
      const follow = async (r: (typeof readers)[number]) => {
        for (;;) {
          const page = await store.readAll({ after: r.checkpoint, limit: r.limit });
          if (page.length > 0) {
            r.seen.push(...page);
            r.checkpoint = page[page.length - 1].position;
            if (Math.random() < 0.3) await new Promise((res) => setImmediate(res));
            continue;
          }
          if (!appending) return;
          await new Promise<void>((res) => {
            wakes.push(res);
            setTimeout(res, 20);
          });
        }
      };
      const following = readers.map(follow);
      for (let i = 0; i < 60; i++) {
        const streamId = `s-${i % 7}`;
        await Promise.all(
          Array.from({ length: 1 + (i % 4) }, () => inner.append(streamId, [event()], 'any')),
        );
        if (i % 5 === 0) await new Promise((res) => setTimeout(res, 5));
      }
      await new Promise((res) => setTimeout(res, 100));
      appending = false;
      wakes.splice(0).forEach((w) => w());
      await Promise.all(following);
      unwatch();
      const log = await inner.readAll({ limit: 10_000 });
      for (const r of readers) {
        expect(r.seen.map((e) => e.position)).toEqual(log.map((e) => e.position));
        expect(r.seen.map((e) => e.eventId)).toEqual(log.map((e) => e.eventId));
      }
    } finally {
      await cleanup();
    }
  });
});
