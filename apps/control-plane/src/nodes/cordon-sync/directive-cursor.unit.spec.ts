import { asLogPosition } from '@fleet/eventstore/port';
import { DirectiveCursors, SEALED_CURSOR } from './directive-cursor';

describe('DirectiveCursors', () => {
  const cursors = new DirectiveCursors('a-secret-of-the-api-0123456789abcdef');

  it('opens what it sealed, for the same cluster, across positions', () => {
    for (const position of [0, 1, 2, 41, 18_342, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER]) {
      const cursor = cursors.seal('c1', asLogPosition(position));
      expect(cursor).toMatch(SEALED_CURSOR);
      expect(cursors.open('c1', cursor)).toBe(position);
    }
  });

  it('does not show the position: every cursor is fresh bytes, the same position included', () => {
    const seen = new Set<string>();
    for (const position of [1000, 1001, 1000, 1000]) {
      const cursor = cursors.seal('c1', asLogPosition(position));
      expect(cursor).not.toContain(String(position));
      expect(seen.has(cursor.slice(3, 12))).toBe(false); // no shared prefix either
      seen.add(cursor.slice(3, 12));
      expect(cursors.open('c1', cursor)).toBe(position);
    }
  });

  it("refuses another cluster's cursor, another secret's, a tampered one and the old plain positions", () => {
    const cursor = cursors.seal('c1', asLogPosition(500));
    expect(cursors.open('c2', cursor)).toBeNull();
    expect(new DirectiveCursors('another-secret-0123456789abcdef').open('c1', cursor)).toBeNull();
    for (let i = 3; i < cursor.length; i++) {
      const flipped = cursor[i] === 'A' ? 'B' : 'A';
      expect(cursors.open('c1', cursor.slice(0, i) + flipped + cursor.slice(i + 1))).toBeNull();
    }
    for (const junk of [
      '500',
      '',
      'd1.',
      'd2.' + cursor.slice(3),
      cursor + 'A',
      cursor.slice(0, -1),
    ]) {
      expect(cursors.open('c1', junk)).toBeNull();
    }
  });

  it('seals only log positions', () => {
    expect(() => cursors.seal('c1', asLogPosition(-1))).toThrow();
    expect(() => cursors.seal('c1', asLogPosition(1.5))).toThrow();
    expect(() => new DirectiveCursors('')).toThrow();
  });
});
