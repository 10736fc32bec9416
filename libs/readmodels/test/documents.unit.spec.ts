import { cloneValue, sameContent } from '../src/documents';

// cloneValue copies common shapes through generated literals once they have been seen a few
// times: every copy, before and after, must be the same deep copy.
describe('cloneValue', () => {
  const card = (i: number) => ({
    uuid: `GPU-${i}`,
    model: 'L40S',
    memoryGiB: 48,
    sessionId: i % 2 ? null : `s-${i}`,
    owner: null,
  });

  it('copies a repeated shape deeply and exactly, before and after it gets its literal', () => {
    for (let i = 0; i < 20; i++) {
      const doc = { _id: `n${i}`, gpus: [card(i), card(i + 1)], nested: card(i), at: new Date(i) };
      const copy = cloneValue(doc);
      expect(copy).toEqual(doc);
      expect(Object.keys(copy.gpus[0])).toEqual(Object.keys(doc.gpus[0]));
      expect(copy.gpus[0]).not.toBe(doc.gpus[0]);
      expect(copy.nested).not.toBe(doc.nested);
      expect(copy.at).not.toBe(doc.at);
      expect(copy.at.getTime()).toBe(i);
      // The copy is independent of the original.
      doc.gpus[0].model = 'changed';
      expect(copy.gpus[0].model).toBe('L40S');
    }
  });

  it('drops undefined fields, also in a shape that has its literal', () => {
    for (let i = 0; i < 10; i++) cloneValue(card(i));
    const copy = cloneValue({ ...card(1), owner: undefined });
    expect(copy).toEqual({ uuid: 'GPU-1', model: 'L40S', memoryGiB: 48, sessionId: null });
    expect('owner' in copy).toBe(false);
  });

  it('copies keys that are not identifiers, and __proto__ as a plain key, the generic way', () => {
    for (let i = 0; i < 10; i++) {
      const labels = { 'fleet/mode': 'shared', 'a-b': '1', 'c d': '2', '0': 'zero', x: 'y' };
      expect(cloneValue(labels)).toEqual(labels);
      const tricky = JSON.parse(
        '{"__proto__": {"polluted": true}, "a": 1, "b": 2, "c": 3, "d": 4, "e": 5}',
      ) as Record<string, unknown>;
      const copy = cloneValue(tricky);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(copy.a).toBe(1);
      expect(copy.e).toBe(5);
    }
  });

  it('keeps sameContent key-order-insensitive', () => {
    expect(sameContent({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(sameContent({ a: 1, b: [1, 2] }, { a: 1, b: [2, 1] })).toBe(false);
  });
});
