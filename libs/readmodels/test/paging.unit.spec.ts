import { DEFAULT_LIMIT, MAX_LIMIT, planPage, toPage } from '../src/paging';
import { Doc, Filter, InvalidCursorError } from '../src/port';

// The MongoDB adapter can only be run against a server, so the exact filters it is handed
// are pinned here.
const cursorAfter = (sort: Record<string, 1 | -1>, last: Doc, filter: Filter = {}): string => {
  const plan = planPage(filter, { sort, limit: 1 });
  const cursor = toPage(plan, [last, { _id: 'zzz' }]).nextCursor;
  if (!cursor) throw new Error('expected a cursor');
  return cursor;
};

describe('planPage', () => {
  it('appends _id as the final ascending tie-breaker and fetches one extra document', () => {
    const plan = planPage({ status: 'ready' }, { sort: { pool: -1 } });
    expect(plan.sort).toEqual([
      ['pool', -1],
      ['_id', 1],
    ]);
    expect(plan.filter).toEqual({ status: 'ready' });
    expect(plan.limit).toBe(DEFAULT_LIMIT);
    expect(plan.fetch).toBe(DEFAULT_LIMIT + 1);
  });

  it('keeps an explicit _id direction and drops keys after it', () => {
    expect(planPage({}, { sort: { a: 1, _id: -1, b: 1 } }).sort).toEqual([
      ['a', 1],
      ['_id', -1],
    ]);
  });

  it('caps the limit and refuses one that is not a positive integer', () => {
    expect(planPage({}, { limit: 10_000 }).limit).toBe(MAX_LIMIT);
    expect(() => planPage({}, { limit: -1 })).toThrow(RangeError);
    expect(() => planPage({}, { sort: { a: 2 as 1 } })).toThrow(RangeError);
  });

  it('narrows the filter to the documents after the cursor, key by key', () => {
    const sort = { cluster: 1, 'capacity.cpu': -1 } as const;
    const cursor = cursorAfter(
      sort,
      { _id: 'n7', cluster: 'eu', capacity: { cpu: 8 } },
      {
        status: 'ready',
      },
    );
    expect(planPage({ status: 'ready' }, { sort, cursor }).filter).toEqual({
      $and: [
        { status: 'ready' },
        {
          $or: [
            { $or: [{ cluster: { $gt: 'eu' } }, { cluster: { $type: ['object', 'bool'] } }] },
            {
              $and: [
                { cluster: 'eu' },
                {
                  $or: [{ 'capacity.cpu': { $lt: 8 } }, { 'capacity.cpu': null }],
                },
              ],
            },
            { $and: [{ cluster: 'eu' }, { 'capacity.cpu': 8 }, { _id: { $gt: 'n7' } }] },
          ],
        },
      ],
    });
  });

  it('pages after a null or missing value: non-null values follow ascending, none descending', () => {
    const asc = cursorAfter({ pool: 1 }, { _id: 'n1' });
    expect(planPage({}, { sort: { pool: 1 }, cursor: asc }).filter).toEqual({
      $and: [
        {},
        { $or: [{ pool: { $ne: null } }, { $and: [{ pool: null }, { _id: { $gt: 'n1' } }] }] },
      ],
    });
    const desc = cursorAfter({ pool: -1 }, { _id: 'n1', pool: null });
    expect(planPage({}, { sort: { pool: -1 }, cursor: desc }).filter).toEqual({
      $and: [{}, { $or: [{ $and: [{ pool: null }, { _id: { $gt: 'n1' } }] }] }],
    });
  });

  it('refuses a cursor made for another sort', () => {
    const cursor = cursorAfter({ pool: 1 }, { _id: 'n1', pool: 'a' });
    expect(() => planPage({}, { sort: { pool: -1 }, cursor })).toThrow(InvalidCursorError);
    expect(() => planPage({}, { sort: {}, cursor })).toThrow(InvalidCursorError);
  });

  it('binds a cursor to its filter, whatever the order of its keys', () => {
    const filter = { status: 'running', owner: 'alice', at: { $gte: '2026', $lt: '2027' } };
    const cursor = cursorAfter({ pool: 1 }, { _id: 'n1', pool: 'a' }, filter);
    const reordered = { at: { $lt: '2027', $gte: '2026' }, owner: 'alice', status: 'running' };
    expect(planPage(reordered, { sort: { pool: 1 }, cursor }).after).toEqual(['a', 'n1']);
    for (const other of [
      {},
      { ...filter, status: 'paused' },
      { status: 'running', owner: 'alice' },
      { ...filter, at: { $gte: '2026', $lt: '2028' } },
      { ...filter, name: /a/ },
    ]) {
      expect(() => planPage(other, { sort: { pool: 1 }, cursor })).toThrow(InvalidCursorError);
    }
    const regex = cursorAfter({ pool: 1 }, { _id: 'n1', pool: 'a' }, { name: /a/i });
    expect(() => planPage({ name: /a/ }, { sort: { pool: 1 }, cursor: regex })).toThrow(
      InvalidCursorError,
    );
  });

  it('refuses a cursor made before cursors were bound to their filter', () => {
    const unbound = Buffer.from(
      JSON.stringify({
        s: [
          ['pool', 1],
          ['_id', 1],
        ],
        v: ['a', 'n1'],
      }),
    ).toString('base64url');
    expect(() => planPage({}, { sort: { pool: 1 }, cursor: unbound })).toThrow(InvalidCursorError);
  });
});

describe('toPage', () => {
  it('gives no cursor when the fetch did not overflow the limit', () => {
    const plan = planPage({}, { limit: 2 });
    expect(toPage(plan, [{ _id: 'a' }, { _id: 'b' }])).toEqual({
      items: [{ _id: 'a' }, { _id: 'b' }],
      nextCursor: null,
    });
  });

  it('refuses to page on a sort field holding an object', () => {
    const plan = planPage({}, { sort: { spec: 1 }, limit: 1 });
    expect(() => toPage(plan, [{ _id: 'a', spec: { x: 1 } }, { _id: 'b' }])).toThrow(TypeError);
  });
});
