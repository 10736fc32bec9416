import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NewEvent } from '../src/port';
import { SqliteEventStore } from '../src/sqlite-event-store';
import { testEvent } from './support/test-event';

const event = (): NewEvent => testEvent();

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
    // At once, without a promise: the heads are read in process.
    expect(store.streamRevisions(asked)).toEqual(singles);
    expect(await store.streamRevisions([])).toEqual([]);
  });
});

describe('SqliteEventStore stream heads kept in memory', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stream-heads-'));
  const file = path.join(dir, 'events.db');
  const a = new SqliteEventStore({ file, pollMs: 50 });
  const b = new SqliteEventStore({ file, pollMs: 50 });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('follows its own appends, concurrent ones in one group commit included', async () => {
    expect(await a.streamRevision('h-own')).toBeNull();
    await a.append('h-own', [event()], 'no_stream');
    expect(await a.streamRevision('h-own')).toBe(0);
    await Promise.all([
      a.append('h-own', [event(), event()], 0),
      a.append('h-x', [event()], 'any'),
    ]);
    expect(await a.streamRevision('h-own')).toBe(2);
    expect(await a.streamRevisions(['h-x', 'h-own'])).toEqual([0, 2]);
  });

  it('does not move a head on a refused append', async () => {
    await expect(a.append('h-own', [event()], 0)).rejects.toThrow();
    expect(await a.streamRevision('h-own')).toBe(2);
  });

  it("sees another connection's appends at once, to known and to missing streams", async () => {
    expect(await a.streamRevisions(['h-other', 'h-own'])).toEqual([null, 2]);
    await b.append('h-other', [event()], 'no_stream');
    await b.append('h-own', [event()], 2);
    expect(await a.streamRevision('h-other')).toBe(0);
    expect(await a.streamRevision('h-own')).toBe(3);
    await b.append('h-own', [event()], 3);
    expect(await a.streamRevisions(['h-own', 'h-other'])).toEqual([4, 0]);
    // And the other way round, through the append path's own check.
    await a.append('h-own', [event()], 4);
    expect(await b.streamRevision('h-own')).toBe(5);
  });

  it('answers what the database says, whatever the order of reads and writes (random)', async () => {
    const streams = ['r-0', 'r-1', 'r-2'];
    const truth = new Map<string, number>();
    for (let step = 0; step < 300; step++) {
      const writer = Math.random() < 0.5 ? a : b;
      const reader = Math.random() < 0.5 ? a : b;
      const s = streams[Math.floor(Math.random() * streams.length)];
      const action = Math.random();
      if (action < 0.5) {
        const head = truth.get(s);
        await writer.append(s, [event()], head === undefined ? 'no_stream' : head);
        truth.set(s, (head ?? -1) + 1);
      } else if (action < 0.75) {
        expect(await reader.streamRevision(s)).toBe(truth.get(s) ?? null);
      } else {
        expect(await reader.streamRevisions(streams)).toEqual(
          streams.map((x) => truth.get(x) ?? null),
        );
      }
    }
  });
});
