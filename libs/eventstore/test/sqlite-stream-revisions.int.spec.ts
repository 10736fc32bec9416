import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NewEvent } from '../src/port';
import { SqliteEventStore } from '../src/sqlite-event-store';

const event = (): NewEvent => ({
  eventId: randomUUID(),
  type: 'TestHappened.v1',
  data: {},
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: { sub: 'system', roles: ['system'] },
    occurredAt: new Date(0).toISOString(),
    schemaVersion: 1,
  },
});

describe('SqliteEventStore.streamRevisions', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stream-revisions-'));
  const store = new SqliteEventStore({ file: path.join(dir, 'events.db'), pollMs: 50 });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers streamRevision of each stream, in the order asked, null for a missing one', async () => {
    await store.append('t-a', [event(), event(), event()], 'no_stream');
    await store.append('t-b', [event()], 'no_stream');
    const asked = ['t-b', 't-missing', 't-a', 't-b', 'x"\'-odd\\stream'];
    const singles = await Promise.all(asked.map((s) => store.streamRevision(s)));
    expect(singles).toEqual([0, null, 2, 0, null]);
    expect(await store.streamRevisions(asked)).toEqual(singles);
    expect(await store.streamRevisions([])).toEqual([]);
  });
});
