import { KeptDocuments, LeafPool, cloneValue, sameContent } from '../src/documents';

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

describe('KeptDocuments', () => {
  const doc = (i: number) => ({
    _id: `n${i}`,
    capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
    labels: { 'fleet/mode': 'shared', zone: `zone-${i % 2}` },
    allocations: {},
    gpus: [{ uuid: `GPU-${i}`, model: 'L40S', memoryGiB: 48, sessionId: null, owner: null }],
  });

  it('keeps frozen copies, sharing equal small flat objects across documents', () => {
    const kept = new KeptDocuments();
    const source = doc(0);
    const a = kept.keep(source);
    const b = kept.keep(doc(2));
    const c = kept.keep(doc(1));
    expect(a).toEqual(doc(0));
    expect(c).toEqual(doc(1));
    expect(a.capacity).toBe(b.capacity);
    expect(a.labels).toBe(b.labels);
    expect(a.labels).not.toBe(c.labels);
    expect(a.allocations).toBe(c.allocations);
    // Copied on the way in: the writer's objects stay its own.
    expect(a.gpus[0]).not.toBe(source.gpus[0]);
    source.gpus[0].owner = 'changed' as never;
    expect(a.gpus[0].owner).toBeNull();
    // Read as they are, and read-only all the way down.
    expect(kept.read(a)).toBe(a);
    for (const part of [a, a.capacity, a.gpus, a.gpus[0]]) expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      (kept.read(a).gpus[0] as { owner: string | null }).owner = 'x';
    }).toThrow(TypeError);
  });

  it('shares the kept parts of a document built from one read, copying only what changed', () => {
    const kept = new KeptDocuments();
    const a = kept.keep(doc(0));
    const changed = { ...kept.read(a), gpus: a.gpus.map((g) => ({ ...g, sessionId: 's1' })) };
    const b = kept.keep(changed);
    expect(b).not.toBe(a);
    expect(b.capacity).toBe(a.capacity);
    expect(b.gpus).not.toBe(a.gpus);
    expect(b.gpus[0]).toEqual({ ...a.gpus[0], sessionId: 's1' });
    expect(Object.isFrozen(b.gpus[0])).toBe(true);
    // Keeping a kept document again copies nothing.
    expect(kept.keep(b)).toBe(b);
  });

  it('never shares an object holding a Date, and reads documents holding one as copies', () => {
    const kept = new KeptDocuments();
    const at = new Date(5);
    const a = kept.keep({ _id: 'x', when: { at }, flat: { n: 1 } });
    expect(a.when.at).toEqual(at);
    expect(a.when.at).not.toBe(at);
    const read = kept.read(a);
    expect(read).toEqual(a);
    expect(read).not.toBe(a);
    read.when.at.setTime(0);
    expect(a.when.at.getTime()).toBe(5);
    // The Date-free part is still a shared, frozen instance.
    expect(kept.keep({ other: a.flat }).other).toBe(a.flat);
    expect(Object.isFrozen(a.when)).toBe(false);
  });

  it('never shares what JSON cannot tell apart: -0, NaN, Infinity, undefined', () => {
    const kept = new KeptDocuments();
    expect(Object.is(kept.keep({ x: { v: -0 } }).x.v, -0)).toBe(true);
    expect(Object.is(kept.keep({ x: { v: 0 } }).x.v, 0)).toBe(true);
    expect(kept.keep({ x: { v: NaN } }).x.v).toBeNaN();
    expect(kept.keep({ x: { v: null } }).x.v).toBeNull();
    expect(kept.keep({ x: { v: Infinity } }).x.v).toBe(Infinity);
    expect(kept.keep({ x: { v: undefined, w: 1 } }).x).toEqual({ w: 1 });
    expect(kept.keep({ x: { v: '1' } }).x.v).toBe('1');
    expect(kept.keep({ x: { v: 1 } }).x.v).toBe(1);
  });

  it('starts the pool over when full, keeping what is stored intact', () => {
    const kept = new KeptDocuments(new LeafPool(2));
    const docs = Array.from({ length: 5 }, (_, i) => kept.keep({ leaf: { i } }));
    expect(docs.map((d) => d.leaf.i)).toEqual([0, 1, 2, 3, 4]);
  });
});
