import { nestedDeeperThan } from './body-depth';

const nest = (depth: number, arrays: boolean): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { nested: value };
  return value;
};

describe('nestedDeeperThan', () => {
  it('accepts scalars, and objects and arrays up to the limit', () => {
    for (const value of [undefined, null, 'x', 1, true])
      expect(nestedDeeperThan(value, 2)).toBe(false);
    expect(nestedDeeperThan(nest(2, false), 2)).toBe(false);
    expect(nestedDeeperThan({ a: [1, 2], b: { c: 'd' } }, 2)).toBe(false);
  });

  it('refuses one level more, in arrays or objects, in any branch', () => {
    expect(nestedDeeperThan(nest(3, true), 2)).toBe(true);
    expect(nestedDeeperThan({ ok: 1, deep: { a: { b: {} } } }, 2)).toBe(true);
  });

  it('measures a million levels without overflowing the stack', () => {
    expect(nestedDeeperThan(nest(1_000_000, true), 32)).toBe(true);
  });
});
