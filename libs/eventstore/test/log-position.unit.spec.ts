import { LOG_START, LogPosition, asLogPosition, laterPosition } from '../src/port';

describe('log positions', () => {
  it('compare and pick the later one, without arithmetic', () => {
    const a = asLogPosition(1_024);
    const b = asLogPosition(77_312);
    expect(laterPosition(a, b)).toBe(b);
    expect(laterPosition(b, a)).toBe(b);
    expect(laterPosition(LOG_START, a)).toBe(a);
    expect(a < b).toBe(true);
  });

  it('cannot be made by arithmetic: the type checker refuses the sum as a position', () => {
    const p = asLogPosition(4_096);
    // @ts-expect-error a position plus one is a number, not a position (`npm run typecheck` fails if this compiles)
    const next: LogPosition = p + 1;
    expect(typeof next).toBe('number');
  });
});
