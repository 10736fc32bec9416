import { LeafPool, cloneValue, sameContent, storedCopy } from '../src/documents';

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

describe('storedCopy', () => {
  it('shares equal small flat objects across documents, and copies everything else', () => {
    const pool = new LeafPool();
    const doc = (i: number) => ({
      _id: `n${i}`,
      capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
      labels: { 'fleet/mode': 'shared', zone: `zone-${i % 2}` },
      allocations: {},
      gpus: [{ uuid: `GPU-${i}`, model: 'L40S', memoryGiB: 48, sessionId: null, owner: null }],
      at: new Date(i),
    });
    const a = storedCopy(doc(0), pool);
    const b = storedCopy(doc(2), pool);
    const c = storedCopy(doc(1), pool);
    expect(a).toEqual(doc(0));
    expect(c).toEqual(doc(1));
    expect(a.capacity).toBe(b.capacity);
    expect(a.labels).toBe(b.labels);
    expect(a.labels).not.toBe(c.labels);
    expect(a.allocations).toBe(c.allocations);
    expect(Object.isFrozen(a.capacity)).toBe(true);
    expect(a.gpus[0]).not.toBe(doc(0).gpus[0]);
    expect(a.at).not.toBe(b.at);
    // Reads copy: what a caller gets is its own, mutable.
    const read = cloneValue(a);
    read.capacity.cpu = 1;
    expect(a.capacity.cpu).toBe(64);
  });

  it('never shares what JSON cannot tell apart: -0, NaN, Infinity, undefined', () => {
    const pool = new LeafPool();
    expect(Object.is(storedCopy({ x: { v: -0 } }, pool).x.v, -0)).toBe(true);
    expect(Object.is(storedCopy({ x: { v: 0 } }, pool).x.v, 0)).toBe(true);
    expect(storedCopy({ x: { v: NaN } }, pool).x.v).toBeNaN();
    expect(storedCopy({ x: { v: null } }, pool).x.v).toBeNull();
    expect(storedCopy({ x: { v: Infinity } }, pool).x.v).toBe(Infinity);
    expect(storedCopy({ x: { v: undefined, w: 1 } }, pool).x).toEqual({ w: 1 });
    expect(storedCopy({ x: { v: '1' } }, pool).x.v).toBe('1');
    expect(storedCopy({ x: { v: 1 } }, pool).x.v).toBe(1);
  });

  it('starts over when full, keeping what is stored intact', () => {
    const pool = new LeafPool(2);
    const docs = Array.from({ length: 5 }, (_, i) => storedCopy({ leaf: { i } }, pool));
    expect(docs.map((d) => d.leaf.i)).toEqual([0, 1, 2, 3, 4]);
  });
});
