import fc from 'fast-check';
import { LabelIndex } from './label-index';

type L = 'a' | 'b' | 'c';
const NAMES: readonly L[] = ['a', 'b', 'c'];
// Values that a concatenated key would confuse (a separator inside a value), and empty ones.
const value = fc.constantFrom('', 'x', 'x\u0000', '\u0000y', 'y', 'x\u0000y', 'POST', '/v1/nodes');
const labelSet = fc.record({ a: value, b: value, c: value });

describe('LabelIndex', () => {
  it('finds what was added for exactly that label set, in the order first added', () => {
    fc.assert(
      fc.property(fc.array(labelSet, { maxLength: 60 }), (sets) => {
        const index = new LabelIndex<L, { labels: Record<L, string>; n: number }>(NAMES);
        const model = new Map<string, { labels: Record<L, string>; n: number }>();
        const order: Array<{ labels: Record<L, string>; n: number }> = [];
        for (const labels of sets) {
          const key = JSON.stringify([labels.a, labels.b, labels.c]);
          const found = index.get(labels);
          expect(found).toBe(model.get(key));
          if (found) {
            found.n++;
          } else {
            const entry = { labels, n: 1 };
            index.add(labels, entry);
            model.set(key, entry);
            order.push(entry);
          }
        }
        expect(index.values()).toEqual(order);
        for (const [key, entry] of model) {
          const [a, b, c] = JSON.parse(key) as string[];
          expect(index.get({ a, b, c })).toBe(entry);
        }
      }),
    );
  });

  it('reads the labels it was built with, whatever else the object carries', () => {
    const index = new LabelIndex<'command' | 'result', number>(['command', 'result']);
    index.add({ command: 'ReportNode', result: 'noop' }, 7);
    const outcome = { command: 'ReportNode', result: 'noop', aggregate: 'node', ms: 1 };
    expect(index.get(outcome)).toBe(7);
    expect(index.get({ command: 'ReportNode', result: 'ok' })).toBeUndefined();
  });

  it('refuses a label set twice and forgets everything on clear', () => {
    const index = new LabelIndex<'a', number>(['a']);
    index.add({ a: 'x' }, 1);
    expect(() => index.add({ a: 'x' }, 2)).toThrow('already');
    index.clear();
    expect(index.get({ a: 'x' })).toBeUndefined();
    expect(index.values()).toEqual([]);
    index.add({ a: 'x' }, 3);
    expect(index.values()).toEqual([3]);
  });

  it('needs a label', () => {
    expect(() => new LabelIndex<never, number>([])).toThrow('at least one label');
  });
});
