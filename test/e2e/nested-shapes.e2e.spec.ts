import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, gpuNode, report } from '../support/reports';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every position below the root holding an object or an array, as paths of keys. */
const containers = (value: Json, at: string[] = []): string[][] => {
  if (value === null || typeof value !== 'object') return [];
  const below = Object.entries(value).flatMap(([k, v]) => containers(v, [...at, k]));
  return at.length === 0 ? below : [at, ...below];
};

/** A copy of `body` with the value at `path` wrapped in an array. */
const wrappedAt = (body: Json, path: string[]): object => {
  const copy = structuredClone(body) as Record<string, Json>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, Json>;
  const last = path[path.length - 1];
  parent[last] = [parent[last]];
  return copy;
};

/** The field a refusal names: an array's item is named by its array. */
const fieldOf = (path: string[]): string =>
  (/^\d+$/.test(path[path.length - 1]) ? path.slice(0, -1) : path).join('.');

/** Every object of `value` (the root too) outside `labels`, as paths of keys. */
const objectsOutsideLabels = (value: Json, at: string[] = []): string[][] => {
  if (value === null || typeof value !== 'object' || at[at.length - 1] === 'labels') return [];
  const below = Object.entries(value).flatMap(([k, v]) => objectsOutsideLabels(v, [...at, k]));
  return Array.isArray(value) ? below : [at, ...below];
};

/** A copy of `body` with `key: 1` added to the object at `path`. */
const withKeyAt = (body: Json, path: string[], key: string): object => {
  const copy = structuredClone(body) as Record<string, Json>;
  let target = copy;
  for (const k of path) target = target[k] as Record<string, Json>;
  Object.defineProperty(target, key, { value: 1, enumerable: true, writable: true });
  return copy;
};

/**
 * class-validator's ValidateNested takes an array where one object belongs and checks its
 * items: a capacity of `[]` was stored as `{}`, a card of `[]` became a card with no uuid, and
 * a node of `[]` was a 500. Every object or array of a valid body, wrapped in an array, must
 * be refused, naming it, with nothing appended.
 */
describe('an array where an object or another array belongs', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({}, { redis: false });
    admin = await t.auth('root', ['admin']);
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(admin)
      .send(report('nest1', [cpuNode('nest1-cpu')]))
      .expect(200);
    await eventually(async () => (await request(t.url).get('/v1/clusters/nest1').set(admin)).ok);
  });
  afterAll(async () => t.close());

  const eventCount = async (): Promise<number> => {
    let count = 0;
    for (let from = 0; ;) {
      const page = await request(t.url)
        .get(`/v1/events?fromPosition=${from}&limit=1000`)
        .set(admin);
      count += page.body.events.length;
      if (page.body.events.length === 0) return count;
      from = page.body.nextPosition;
    }
  };

  const seeds: Array<[string, string, { [key: string]: Json }, number]> = [
    [
      'an inventory report',
      '/v1/inventory/reports',
      report('nest1', [
        gpuNode('nest1-gpu', 2, 'L40S', { labels: { 'fleet/mode': 'shared' } }),
      ]) as unknown as { [key: string]: Json },
      200,
    ],
    [
      'a node pool',
      '/v1/clusters/nest1/node-pools',
      {
        name: 'tenants-pool',
        kind: 'gpu',
        gpuType: 'L40S',
        access: { tenants: ['alice', 'bob'] },
        autoscaling: { min: 0, max: 2 },
      },
      201,
    ],
  ];

  it.each(seeds)(
    'refuses %s with any part wrapped, then takes it whole',
    async (_what, path, seed, ok) => {
      const before = await eventCount();
      const paths = containers(seed);
      expect(paths.length).toBeGreaterThanOrEqual(3);
      for (const at of paths) {
        const res = await request(t.url).post(path).set(admin).send(wrappedAt(seed, at));
        const named = (res.body.error?.details?.fields ?? []).map(
          (f: { field: string }) => f.field,
        );
        expect({ at: at.join('.'), status: res.status, code: res.body.error?.code, named }).toEqual(
          {
            at: at.join('.'),
            status: 400,
            code: 'validation_failed',
            named: [fieldOf(at)],
          },
        );
      }
      expect(await eventCount()).toBe(before);
      await request(t.url).post(path).set(admin).send(seed).expect(ok);
    },
  );

  // class-transformer skips a key named like a member of Object.prototype (the ValidationPipe
  // deletes `constructor` and `prototype`): such a field was dropped, the body taken. In labels
  // any key is data (the inventory e2e keeps `constructor` as a label).
  const OBJECT_KEYS = [
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
  ];
  it.each(seeds)(
    'refuses %s with a field named like an Object.prototype member anywhere, naming its path',
    async (_what, path, seed) => {
      const before = await eventCount();
      const paths = objectsOutsideLabels(seed);
      expect(paths.length).toBeGreaterThanOrEqual(3);
      for (const at of paths) {
        for (const key of OBJECT_KEYS) {
          const res = await request(t.url)
            .post(path)
            .set(admin)
            .send(withKeyAt(seed, at, key));
          const field = [...at, key].join('.');
          expect({ field, status: res.status, body: res.body.error }).toEqual({
            field,
            status: 400,
            body: expect.objectContaining({
              code: 'validation_failed',
              details: expect.objectContaining({
                fields: [{ field, problems: [`property ${key} should not exist`] }],
              }),
            }),
          });
        }
      }
      expect(await eventCount()).toBe(before);
    },
  );
});
