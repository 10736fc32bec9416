import { isLater, thenMade } from './made';

describe('a value made at once or later', () => {
  it('tells a promise from a value made at once', () => {
    expect(isLater(Promise.resolve(1))).toBe(true);
    expect(isLater((async () => 1)())).toBe(true);
    for (const now of [1, null, undefined, [], {}, 'x']) expect(isLater(now)).toBe(false);
  });

  it('goes on at once with a value made at once, later with a promise', async () => {
    expect(thenMade(2, (v) => v * 3)).toBe(6);
    const later = thenMade(Promise.resolve(2), (v) => v * 3);
    expect(isLater(later)).toBe(true);
    await expect(later).resolves.toBe(6);
  });
});
