import { manualClock, systemClock } from './clock';

describe('clocks', () => {
  it('a manual clock reads its time until it is moved', () => {
    const clock = manualClock('2026-01-01T00:00:00.000Z');
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.500Z');
    clock.set('2026-02-01T00:00:00.000Z');
    expect(clock.now().toISOString()).toBe('2026-02-01T00:00:00.000Z');
  });

  it('hands out copies, so a caller cannot move the clock by mutating a date', () => {
    const clock = manualClock('2026-01-01T00:00:00.000Z');
    clock.now().setTime(0);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('the system clock reads the wall clock', () => {
    const before = Date.now();
    const read = systemClock.now().getTime();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });
});
