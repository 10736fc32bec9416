import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import fc from 'fast-check';
import { DomainError } from '@fleet/kernel';
import { createValidationPipe } from '../../platform/http/validation.pipe';
import { InventoryReportDto } from './inventory.dto';
import { isPlainValidInventoryReport } from './inventory-report.check';

/**
 * The report's fast path (inventory-report.check.ts, the DTO's `fastPath`) in the app's one
 * validation seam (fast-validation.ts): it accepts and refuses exactly what the plain path (the
 * seam with `fast: false`: class-validator on the DTO) does, with the same error details.
 */
const seam = createValidationPipe();
const plain = createValidationPipe({ fast: false });
const META = { type: 'body' as const, metatype: InventoryReportDto, data: undefined };

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const settle = async (run: () => unknown): Promise<Outcome> => {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return {
      ok: false,
      error: error instanceof DomainError ? { code: error.code, details: error.details } : error,
    };
  }
};

/** The plain path: what the route answered before any fast check. */
const viaPlain = (body: unknown) => settle(() => plain.transform(structuredClone(body), META));
/** The seam: the fast path where it accepts, the plain path otherwise. */
const viaSeam = (body: unknown) => settle(() => seam.transform(structuredClone(body), META));
/** The lean route's call: at once where the fast path accepts, else the seam's promise. */
const viaLean = (body: unknown) =>
  settle(() => {
    const copy = structuredClone(body);
    return seam.validateNow(copy, META) ?? seam.transform(copy, META);
  });
/** The DTO alone (class-transformer and class-validator), without what the seam adds. */
const viaDtoAlone = (body: unknown) =>
  settle(() => ValidationPipe.prototype.transform.call(plain, structuredClone(body), META));

const gpuNode = (hostname: string, over: Record<string, unknown> = {}) => ({
  hostname,
  role: 'gpu',
  labels: { 'fleet/mode': 'shared', 'topology.kubernetes.io/zone': 'zone-1' },
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: Array.from({ length: 8 }, (_, i) => ({
    uuid: `GPU-${hostname}-${i}`,
    model: 'L40S',
    memoryGiB: 48,
  })),
  kubeletReady: true,
  unschedulable: false,
  ...over,
});
const cpuNode = (hostname: string) => ({
  hostname,
  role: 'cpu',
  labels: {},
  capacity: { cpu: 32, memoryGiB: 128, diskGiB: 500 },
  gpus: [],
  kubeletReady: true,
  unschedulable: false,
});
const report = (clusterId: unknown, nodes: unknown) => ({ clusterId, nodes });

const fieldsOf = (o: Outcome): string[] =>
  o.ok
    ? []
    : ((o.error as { details: { fields: Array<{ field: string }> } }).details.fields ?? []).map(
        (f) => f.field,
      );

describe('the inventory report in the validation seam', () => {
  it.each([
    ['a gpu node', report('c1', [gpuNode('gpu-a-01')])],
    ['a cpu node', report('c1', [cpuNode('cpu-a-01')])],
    [
      '100 nodes',
      report(
        'bench-c7',
        Array.from({ length: 100 }, (_, i) => gpuNode(`gpu-7-${i}`)),
      ),
    ],
    [
      'optional fields absent or null',
      report('c1', [
        {
          hostname: 'n1',
          role: 'storage',
          capacity: { cpu: 0, memoryGiB: 0, diskGiB: 0 },
          kubeletReady: false,
          labels: null,
          gpus: null,
          unschedulable: null,
          observedAt: null,
        },
      ]),
    ],
    [
      'an observedAt',
      report('c1', [gpuNode('gpu-a-01', { observedAt: '2026-12-02T15:00:00.123Z' })]),
    ],
    [
      'an observedAt with an offset and nanoseconds',
      report('c1', [
        gpuNode('gpu-a-01', { observedAt: '2026-12-02T19:00:00.123456789+09:00' }),
        gpuNode('gpu-a-02', { observedAt: '2026-12-02T04:30:00-05:30' }),
      ]),
    ],
    // Semantic problems are the controller's to find, after the cluster check, as before.
    ['a bad mode label', report('c1', [gpuNode('gpu-x', { labels: { 'fleet/mode': 'solo' } })])],
    ['a duplicated hostname', report('c1', [gpuNode('gpu-x'), gpuNode('gpu-x')])],
  ])('takes the fast path for %s, where the DTO accepts it unchanged', async (_what, body) => {
    expect(isPlainValidInventoryReport(structuredClone(body))).toBe(true);
    const dto = await viaPlain(body);
    expect(dto.ok).toBe(true);
    expect(dto.ok && dto.value).toEqual(body);
    expect(await viaSeam(body)).toEqual({ ok: true, value: body });
    // At once, without a promise: the value itself.
    const copy = structuredClone(body);
    expect(seam.validateNow(copy, META)).toBe(copy);
  });

  it.each([
    ['a bad hostname', report('c1', [gpuNode('GPU_A')]), 'nodes.0.hostname'],
    ['an unknown role', report('c1', [gpuNode('gpu-x', { role: 'router' })]), 'nodes.0.role'],
    [
      'an unknown model',
      report('c1', [gpuNode('gpu-x', { gpus: [{ uuid: 'g', model: 'H100', memoryGiB: 8 }] })]),
      'nodes.0.gpus.0.model',
    ],
    ['no nodes', report('c1', []), 'nodes'],
    ['an unknown field', { ...report('c1', [gpuNode('gpu-x')]), extra: 1 }, 'extra'],
    ['an unknown node field', report('c1', [gpuNode('gpu-x', { extra: 1 })]), 'nodes.0.extra'],
    [
      'negative capacity',
      report('c1', [gpuNode('gpu-x', { capacity: { cpu: -1, memoryGiB: 1, diskGiB: 1 } })]),
      'nodes.0.capacity.cpu',
    ],
    ['a bad cluster id', report('C_1', [gpuNode('gpu-x')]), 'clusterId'],
    [
      'a bad observedAt',
      report('c1', [gpuNode('gpu-x', { observedAt: '2019-02-30' })]),
      'nodes.0.observedAt',
    ],
    ...[
      ['a week date', '2026-W49-1'],
      ['a week', '2026-W49'],
      ['an ordinal date', '2026-337'],
      ['a decimal comma', '2026-12-01T10:00:00,5Z'],
      ['a basic form', '20261201T100000Z'],
      ['a local time (no offset)', '2026-12-01T00:00:00'],
      ['a date alone', '2026-12-01'],
      ['a leap second', '2026-12-31T23:59:60Z'],
      ['an offset without a colon', '2026-12-01T10:00:00+0900'],
    ].map(([what, observedAt]): [string, ReturnType<typeof report>, string] => [
      `an observedAt as ${what}`,
      report('c1', [gpuNode('gpu-x', { observedAt })]),
      'nodes.0.observedAt',
    ]),
    // class-transformer skips such keys and the ValidationPipe deletes some: they were dropped.
    ...(
      [
        ['toString', { ...report('c1', [gpuNode('gpu-x')]), toString: 1 }],
        ['hasOwnProperty', { ...report('c1', [gpuNode('gpu-x')]), hasOwnProperty: 'x' }],
        ['nodes.0.constructor', report('c1', [gpuNode('gpu-x', { constructor: 1 })])],
        ['nodes.0.valueOf', report('c1', [gpuNode('gpu-x', { valueOf: 1 })])],
        [
          'nodes.0.capacity.prototype',
          report('c1', [
            gpuNode('gpu-x', { capacity: { cpu: 1, memoryGiB: 1, diskGiB: 1, prototype: 1 } }),
          ]),
        ],
        [
          'nodes.1.gpus.0.constructor',
          report('c1', [
            cpuNode('cpu-x'),
            gpuNode('gpu-x', {
              gpus: [{ uuid: 'g', model: 'L40S', memoryGiB: 8, constructor: 'x' }],
            }),
          ]),
        ],
        [
          'nodes.0.gpus.0.__defineGetter__',
          report('c1', [
            gpuNode('gpu-x', {
              gpus: [{ uuid: 'g', model: 'L40S', memoryGiB: 8, __defineGetter__: 1 }],
            }),
          ]),
        ],
      ] as Array<[string, unknown]>
    ).map(([field, body]): [string, unknown, string] => [`a field named ${field}`, body, field]),
    [
      '65 cards',
      report('c1', [
        gpuNode('gpu-x', { gpus: Array(65).fill({ uuid: 'g', model: 'L40S', memoryGiB: 8 }) }),
      ]),
      'nodes.0.gpus',
    ],
  ])('refuses %s exactly as the DTO does', async (_what, body: unknown, field) => {
    expect(isPlainValidInventoryReport(structuredClone(body))).toBe(false);
    const dto = await viaPlain(body);
    expect(dto.ok).toBe(false);
    expect(fieldsOf(dto)).toContain(field);
    expect(await viaSeam(body)).toEqual(dto);
    expect(await viaLean(body)).toEqual(dto);
  });

  // ValidateNested alone took an array where one object belongs (it checks the items): a
  // capacity of [] or a card of [] was stored as {} and a node of [] was a 500.
  it.each([
    [
      'capacity as an array of a valid capacity',
      report('c1', [gpuNode('gpu-x', { capacity: [{ cpu: 1, memoryGiB: 1, diskGiB: 1 }] })]),
      'nodes.0.capacity',
      /must be an object/,
    ],
    [
      'capacity as an empty array',
      report('c1', [gpuNode('gpu-x', { capacity: [] })]),
      'nodes.0.capacity',
      /must be an object/,
    ],
    [
      'a card as an empty array',
      report('c1', [gpuNode('gpu-x', { gpus: [[]] })]),
      'nodes.0.gpus',
      /each value in gpus must be an object/,
    ],
    [
      'a card as an array of a valid card',
      report('c1', [gpuNode('gpu-x', { gpus: [[{ uuid: 'g', model: 'L40S', memoryGiB: 8 }]] })]),
      'nodes.0.gpus',
      /each value in gpus must be an object/,
    ],
    [
      'a node as an empty array',
      report('c1', [[]]),
      'nodes',
      /each value in nodes must be an object/,
    ],
    // A value of the wrong type is told its type only, not fields it cannot have.
    ['nodes as an object', report('c1', {}), 'nodes', /must be an array/],
    [
      'cards as an object',
      report('c1', [gpuNode('gpu-x', { gpus: {} })]),
      'nodes.0.gpus',
      /must be an array/,
    ],
  ])('refuses %s, naming that field alone', async (_what, body, field, problem) => {
    expect(isPlainValidInventoryReport(structuredClone(body))).toBe(false);
    const refused = await viaSeam(body);
    expect(refused.ok).toBe(false);
    expect(fieldsOf(refused)).toEqual([field]);
    const details = (refused as { error: { details: { fields: Array<{ problems: string[] }> } } })
      .error.details;
    expect(details.fields[0].problems.join(' ')).toMatch(problem);
  });

  it('hands prototype keys in labels to the DTO, and keeps them as labels (the DTO strips them)', async () => {
    const labels = JSON.parse(
      '{"constructor":"x","prototype":"y","__proto__":"z","toString":"t","valueOf":"v","a":"b"}',
    );
    const body = report('c1', [gpuNode('gpu-x', { labels }), cpuNode('cpu-x')]);
    expect(isPlainValidInventoryReport(structuredClone(body))).toBe(false);
    const dto = await viaDtoAlone(body);
    expect(dto.ok && (dto.value as InventoryReportDto).nodes[0].labels).toEqual({ a: 'b' });
    expect(await viaPlain(body)).toEqual(await viaSeam(body));
    const piped = await viaSeam(body);
    expect(piped.ok).toBe(true);
    const kept = (piped.ok && (piped.value as InventoryReportDto).nodes[0].labels) || {};
    // Own keys, `__proto__` too (the controller refuses it as a label key, naming it).
    expect(Object.keys(kept).sort()).toEqual([
      '__proto__',
      'a',
      'constructor',
      'prototype',
      'toString',
      'valueOf',
    ]);
    expect(Object.getPrototypeOf(kept)).toBeNull();
    expect(kept.constructor).toBe('x');
    expect(kept.toString).toBe('t');
    expect(piped.ok && (piped.value as InventoryReportDto).nodes[1].labels).toEqual({});
  });

  /** Values of every JSON type and edge values for each field. */
  const junk: fc.Arbitrary<unknown> = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(
      '',
      'gpu',
      'cpu',
      'L40S',
      'MIG_1g',
      'gpu-a',
      'a.b',
      '2026-12-02T15:00:00Z',
      '2026-02-30',
    ),
    fc.constantFrom(-1, 0, 1, 64, 1024, 1025, 4096, 4097, 65536, 1048576, 1048577, 0.5, -0),
    fc.array(fc.anything(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), fc.anything(), { maxKeys: 3 }),
    fc.constantFrom('constructor', 'prototype', '__proto__'),
  );
  /** Names class-transformer skips or the ValidationPipe deletes (object-keys.ts). */
  const objectKey = fc.constantFrom(
    'constructor',
    'prototype',
    '__proto__',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
  );
  /** Mostly a good value, sometimes a bad one of the right type, sometimes junk. */
  const maybe = <T>(good: fc.Arbitrary<T>, bad?: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
    fc.oneof(
      { weight: 30, arbitrary: good },
      { weight: bad ? 1 : 0, arbitrary: bad ?? junk },
      { weight: 1, arbitrary: junk },
    );
  const withExtra = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
    fc.oneof(
      { weight: 10, arbitrary: arb },
      {
        weight: 1,
        arbitrary: fc
          .tuple(arb, fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), objectKey), junk)
          .map(([o, k, v]) => (o && typeof o === 'object' ? { ...o, [k]: v } : o)),
      },
    );
  const gpu = withExtra(
    fc.record(
      {
        uuid: maybe(fc.constantFrom('GPU-1', 'g', 'a/b:c'), fc.constantFrom('-x', 'x'.repeat(129))),
        model: maybe(fc.constantFrom('L40S', 'HPC_GPU', 'MIG_3g'), fc.constant('H100')),
        memoryGiB: maybe(fc.integer({ min: 1, max: 1024 }), fc.constantFrom(0, 1025, 1.5)),
      },
      { requiredKeys: ['uuid', 'model', 'memoryGiB'] },
    ),
  );
  const labels = fc.dictionary(
    fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom('fleet/mode', 'a', 'x.io/b', 'Bad Key', '') },
      { weight: 1, arbitrary: objectKey },
      { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
    ),
    maybe(fc.constantFrom('shared', 'dedicated', 'solo', '', 'x y')),
    { maxKeys: 3 },
  );
  const node = fc.record(
    {
      hostname: maybe(
        fc.constantFrom('gpu-a-01', 'n1', 'a.b.c'),
        fc.constantFrom('GPU_A', '-a', 'a'.repeat(64)),
      ),
      role: maybe(fc.constantFrom('gpu', 'cpu', 'master', 'storage'), fc.constant('router')),
      labels: maybe(labels),
      capacity: maybe(
        withExtra(
          fc.record({
            cpu: maybe(fc.integer({ min: 0, max: 4096 }), fc.constantFrom(-1, 4097, 0.5)),
            memoryGiB: maybe(fc.integer({ min: 0, max: 65536 }), fc.constantFrom(-1, 65537)),
            diskGiB: maybe(fc.integer({ min: 0, max: 1048576 }), fc.constantFrom(-1, 1048577)),
          }),
        ),
      ),
      gpus: maybe(fc.array(maybe(gpu), { maxLength: 3 })),
      kubeletReady: maybe(fc.boolean()),
      unschedulable: maybe(fc.boolean()),
      observedAt: maybe(
        fc.constantFrom(
          '2026-12-02T15:00:00.123Z',
          '2026-12-02T19:00:00+09:00',
          '2024-02-29T00:00:00Z',
        ),
        fc.constantFrom(
          '2026-02-29T00:00:00Z',
          'x',
          '2026-12-02T25:00:00Z',
          '2026-12-02',
          '2026-W49-1',
          '2026-12-01T10:00:00,5Z',
          '2026-12-01T10:00:00',
        ),
      ),
    },
    { requiredKeys: ['hostname', 'role', 'capacity', 'kubeletReady'] },
  );
  const body = withExtra(
    fc.record(
      {
        clusterId: maybe(
          fc.constantFrom('c1', 'bench-c1'),
          fc.constantFrom('C1', '-c', 'a'.repeat(64)),
        ),
        nodes: maybe(fc.array(withExtra(node), { minLength: 0, maxLength: 3 })),
      },
      { requiredKeys: ['clusterId', 'nodes'] },
    ),
  );

  it('agrees with the DTO on shaped-but-wrong bodies: same value, or the same refusal', async () => {
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ weight: 8, arbitrary: body }, { weight: 1, arbitrary: junk }),
        async (b) => {
          const dto = await viaPlain(b);
          if (isPlainValidInventoryReport(structuredClone(b))) {
            fast++;
            // Only ever "valid" where the DTO accepts the body as it came.
            expect(dto.ok).toBe(true);
            expect(dto.ok && dto.value).toEqual(b);
          }
          // The same value (labels as sent too), or the same refusal, by either call.
          expect(await viaSeam(b)).toEqual(dto);
          expect(await viaLean(b)).toEqual(dto);
        },
      ),
      { numRuns: 3000 },
    );
    // The fast path is exercised: 286-353 of the 3,000 bodies in four runs; 150 is far below.
    expect(fast).toBeGreaterThan(150);
  });
});
