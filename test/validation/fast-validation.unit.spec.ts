import 'reflect-metadata';
import fc from 'fast-check';
import { getMetadataStorage } from 'class-validator';
import * as audit from '../../apps/control-plane/src/audit/audit.dto';
import * as billing from '../../apps/control-plane/src/billing/billing.dto';
import * as clusters from '../../apps/control-plane/src/clusters/clusters.dto';
import * as inventory from '../../apps/control-plane/src/nodes/reporting/inventory.dto';
import * as nodes from '../../apps/control-plane/src/nodes/nodes.dto';
import * as notifications from '../../apps/control-plane/src/notifications/notifications.dto';
import * as pools from '../../apps/control-plane/src/pools/pools.dto';
import * as sessions from '../../apps/control-plane/src/sessions/sessions.dto';
import * as page from '../../apps/control-plane/src/platform/http/page-query.dto';
import {
  compileFastCheck,
  FastValidationPipe,
} from '../../apps/control-plane/src/platform/http/fast-validation';
import { createValidationPipe } from '../../apps/control-plane/src/platform/http/validation.pipe';

type Ctor = new () => object;

/** Every DTO class of the app: exported classes with class-validator metadata. */
const dtos: Ctor[] = [
  ...new Set(
    [audit, billing, clusters, inventory, nodes, notifications, pools, sessions, page]
      .flatMap((m) => Object.values(m))
      .filter(
        (v): v is Ctor =>
          typeof v === 'function' &&
          getMetadataStorage().getTargetValidationMetadatas(v, '', false, false, undefined).length >
            0,
      ),
  ),
];

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.constant(''),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -3, max: 3 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

/** Strings a pattern accepts; fast-check cannot generate for every pattern (lookaheads). */
const matching = (pattern: RegExp): fc.Arbitrary<string> => {
  try {
    return fc.stringMatching(pattern);
  } catch {
    const samples = ['a', 'gpu-1', 'node-1.example.com', 'L40S', 'c-1', 'x'.repeat(64)];
    return fc.constantFrom(...samples.filter((x) => pattern.test(x)), 'a');
  }
};

/** Values near each constraint's edges (so the accept path is taken often) or junk. */
const valueFor = (target: Ctor, property: string): fc.Arbitrary<unknown> => {
  const near: Array<fc.Arbitrary<unknown>> = [];
  for (const m of getMetadataStorage().getTargetValidationMetadatas(
    target,
    '',
    false,
    false,
    undefined,
  )) {
    if (m.propertyName !== property) continue;
    const [a] = (m.constraints ?? []) as unknown[];
    if (m.name === 'isIn') near.push(fc.constantFrom(...(a as unknown[])));
    if (m.name === 'matches') near.push(matching(new RegExp(a as RegExp | string)));
    if (m.name === 'maxLength' || m.name === 'minLength')
      near.push(fc.string({ maxLength: Number(a) + 2, unit: 'grapheme-composite' }));
    if (m.name === 'min' || m.name === 'max')
      near.push(fc.integer({ min: Number(a) - 2, max: Number(a) + 2 }));
    if (m.name === 'isInt') near.push(fc.integer({ min: -5, max: 500 }));
    if (m.name === 'isBoolean') near.push(fc.boolean());
    if (m.name === 'isString') near.push(fc.string({ maxLength: 12 }));
  }
  return near.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.oneof(...near) }, junk) : junk;
};

const bodyFor = (target: Ctor): fc.Arbitrary<unknown> => {
  const properties = [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(target, '', false, false, undefined)
        .map((m) => m.propertyName),
    ),
  ];
  const values = Object.fromEntries(properties.map((p) => [p, valueFor(target, p)]));
  // Every key present (so DTOs with several required fields are accepted often), or any subset.
  const record = fc.oneof(fc.record(values), fc.record(values, { requiredKeys: [] }));
  return fc.oneof(
    { weight: 8, arbitrary: record },
    {
      weight: 1,
      arbitrary: fc
        .tuple(record, fc.string({ minLength: 1, maxLength: 6 }))
        .map(([r, k]) => ({ ...r, [k]: 1 })),
    },
    { weight: 1, arbitrary: junk },
  );
};

const outcome = async (run: () => Promise<unknown>) => {
  try {
    return { ok: await run() };
  } catch (error) {
    return { refused: error };
  }
};

describe('FastValidationPipe', () => {
  const fast = createValidationPipe() as FastValidationPipe;
  const full = createValidationPipe({ fast: false });

  it('finds the DTOs and compiles a fast check for the plain ones (cordon among them)', () => {
    expect(dtos.length).toBeGreaterThan(10);
    expect(compileFastCheck(nodes.CordonNodeDto)).not.toBeNull();
    // Nested and class-transformer DTOs are left to the full pipe.
    expect(compileFastCheck(inventory.InventoryReportDto)).toBeNull();
  });

  it.each(dtos.map((d) => [d.name, d] as const))(
    '%s: the same answer as class-transformer + class-validator, for bodies and queries',
    async (_name, dto) => {
      const check = compileFastCheck(dto);
      const before = fast.fastAccepts;
      await fc.assert(
        fc.asyncProperty(bodyFor(dto), fc.constantFrom('body', 'query'), async (value, type) => {
          const metadata = { type: type as 'body' | 'query', metatype: dto, data: '' };
          // Copies made in this realm (structuredClone's objects have another Object.prototype),
          // and as Fastify's query parser makes them (a prototype of their own) for queries.
          const copy = () => {
            const plain: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
            if (type !== 'query' || plain === null || typeof plain !== 'object') return plain;
            return Object.assign(Object.create(Object.create(null) as object) as object, plain);
          };
          const a = await outcome(() => fast.transform(copy(), metadata));
          const b = await outcome(() => full.transform(copy(), metadata));
          expect(a).toStrictEqual(b);
          if ('ok' in a) expect(Object.getPrototypeOf(a.ok)).toBe(dto.prototype);
        }),
        { numRuns: 300 },
      );
      // Where a check compiles, the property exercised its accept path, not only refusals.
      if (check) expect(fast.fastAccepts).toBeGreaterThan(before);
    },
  );

  it('refuses what the full pipe refuses, with its error (cordon: reason too long, extra field)', async () => {
    const metadata = { type: 'body' as const, metatype: nodes.CordonNodeDto, data: '' };
    for (const value of [{ reason: 'x'.repeat(501) }, { reason: 'ok', extra: 1 }, { reason: 5 }]) {
      const a = await outcome(() => fast.transform(value, metadata));
      expect('refused' in a).toBe(true);
      expect(a).toStrictEqual(await outcome(() => full.transform(value, metadata)));
    }
    await expect(fast.transform({ reason: 'maintenance' }, metadata)).resolves.toStrictEqual(
      Object.assign(new nodes.CordonNodeDto(), { reason: 'maintenance' }),
    );
  });
});
