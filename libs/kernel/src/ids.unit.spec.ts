import { eventIdFor, newId, uuidFrom, uuidV7 } from './ids';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const versionOf = (id: string): string => id[14];
const msOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('uuidV7', () => {
  it('is a valid RFC 9562 version-7 UUID carrying the millisecond it was made', () => {
    const before = Date.now();
    const id = uuidV7();
    const after = Date.now();
    expect(id).toMatch(UUID);
    expect(versionOf(id)).toBe('7');
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(after);
  });

  it('sorts in creation order, within a millisecond and across many', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidV7());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(UUID);
  });

  it('newId is time-ordered too', () => {
    const a = newId();
    const b = newId();
    expect(versionOf(a)).toBe('7');
    expect(a < b).toBe(true);
  });
  it('never goes backwards: counter overflow and a clock stepping back borrow the next ms', () => {
    // Last in this file's order of ids: it moves the process's clock to 2040.
    const ms = Date.UTC(2040, 0, 1);
    const ids = Array.from({ length: 10_000 }, () => uuidV7(ms));
    ids.push(uuidV7(ms - 5_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(msOf(ids[0])).toBe(ms);
    expect(msOf(ids[ids.length - 1])).toBeGreaterThan(ms);
  });
});

describe('eventIdFor', () => {
  const commandId = uuidV7();

  it('is deterministic: a retried command derives the same ids', () => {
    expect(eventIdFor(commandId, 0)).toBe(eventIdFor(commandId, 0));
    expect(eventIdFor(commandId, 3)).toBe(eventIdFor(commandId, 3));
  });

  it('is distinct per index and per command', () => {
    const ids = new Set<string>();
    for (let c = 0; c < 200; c++) {
      const cmd = uuidV7();
      for (let i = 0; i < 50; i++) ids.add(eventIdFor(cmd, i));
    }
    expect(ids.size).toBe(200 * 50);
  });

  it('is a valid UUID (version 8, variant 10)', () => {
    for (let i = 0; i < 100; i++) {
      const id = eventIdFor(commandId, i);
      expect(id).toMatch(UUID);
      expect(versionOf(id)).toBe('8');
    }
    expect(eventIdFor(uuidFrom('idempotency', 'k'), 0)).toMatch(UUID);
    expect(eventIdFor('not-a-uuid', 0)).toMatch(UUID);
  });

  it("keeps the command id's time-ordered prefix", () => {
    const commands = Array.from({ length: 1000 }, () => uuidV7());
    const events = commands.map((c) => eventIdFor(c, 0));
    expect([...events].sort()).toEqual(events);
    expect(msOf(events[0])).toBe(msOf(commands[0]));
    expect(events[0].slice(0, 13)).toBe(commands[0].slice(0, 13));
  });

  it('leaves hash-derived ids as they were', () => {
    const id = uuidFrom('node', 'c1', 'gpu-a-01');
    expect(id).toMatch(UUID);
    expect(versionOf(id)).toBe('5');
    expect(uuidFrom('node', 'c1', 'gpu-a-01')).toBe(id);
  });

  it('derives the same ids in every version: node and session ids are stored in the log', () => {
    // SHA-1 of the UTF-8 parts joined by NUL, as computed by createHash when the rule was set.
    expect(uuidFrom('session', '노드-01')).toBe('745e54c1-1cec-5247-a43a-929fbf58ea67');
  });
});
