import type { OpenAPIObject } from '@nestjs/swagger';
import fc from 'fast-check';
import request from 'supertest';
import { Operation, operationsOf } from '../../apps/control-plane/src/platform/openapi/operations';
import { startApp, TestApp } from '../support/app';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RUNS_PER_ROUTE = 100;
/** The whole suite stays under about a minute however many routes the features add. */
const BUDGET_MS = 45_000;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Values of every JSON type, so most are the wrong type for whatever a field expects. */
const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('', ' ', '-1', '1e309', '__proto__', 'constructor', '\u0000', '💥'.repeat(50)),
  fc.constantFrom(-1, 0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e308, 0.5),
  fc.array(fc.anything(), { maxLength: 5 }),
  fc.dictionary(fc.string(), fc.anything(), { maxKeys: 5 }),
);

/**
 * Large payload parts, written into the JSON text only when sent: fast-check prints a failing
 * value through these short names instead of walking 400 kB or 3,000 levels.
 */
class Huge {
  constructor(readonly length: number) {}
  toJSON(): string {
    return 'x'.repeat(this.length);
  }
  [fc.toStringMethod](): string {
    return `Huge(${this.length})`;
  }
}

class Deep {
  static readonly marker = '\u0000deep\u0000';
  constructor(
    readonly depth: number,
    readonly arrays: boolean,
  ) {}
  toJSON(): string {
    return `${Deep.marker}${this.arrays ? 'a' : 'o'}${this.depth}`;
  }
  [fc.toStringMethod](): string {
    return `Deep(${this.depth}, ${this.arrays ? 'arrays' : 'objects'})`;
  }
}

const hugeString = fc.integer({ min: 10_000, max: 400_000 }).map((n) => new Huge(n));

/** Objects or arrays nested deeper than any DTO, for recursion and stack limits. */
const deeplyNested = fc
  .tuple(fc.integer({ min: 20, max: 3_000 }), fc.boolean())
  .map(([depth, arrays]) => new Deep(depth, arrays));

/** JSON text of a fuzzed body, with each Deep expanded in place. */
const toJson = (body: unknown): string | undefined =>
  JSON.stringify(body)?.replace(
    /"\\u0000deep\\u0000([ao])(\d+)"/g,
    (_m, kind: string, n: string) => {
      const depth = Number(n);
      return kind === 'a'
        ? `${'['.repeat(depth)}"bottom"${']'.repeat(depth)}`
        : `${'{"nested":'.repeat(depth)}"bottom"${'}'.repeat(depth)}`;
    },
  );

/** Random bodies for one route: anything at all, and objects shaped like its DTO but wrong. */
const bodies = (op: Operation): fc.Arbitrary<unknown> => {
  const keys = Object.keys(op.bodyProperties ?? {});
  const shaped =
    keys.length === 0
      ? fc.dictionary(fc.string(), junkValue, { maxKeys: 5 })
      : fc.record(
          Object.fromEntries(keys.map((k) => [k, fc.oneof(junkValue, hugeString, deeplyNested)])),
          { requiredKeys: [] },
        );
  const withUnknownKey = shaped.chain((body) =>
    fc
      .tuple(fc.string({ minLength: 1 }), junkValue)
      .map(([k, v]) => (body && typeof body === 'object' ? { ...body, [k]: v } : body)),
  );
  return fc.oneof(
    fc.anything({ withNullPrototype: false }),
    shaped,
    withUnknownKey,
    hugeString,
    deeplyNested,
    fc.record({ [keys[0] ?? 'x']: deeplyNested }),
  );
};

/** Path parameters: plausible ids, ids of no one, and junk that still fits in one segment. */
const pathParam: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  fc.stringMatching(/^[a-z]{1,8}-[a-z0-9]{1,12}$/),
  fc.constantFrom('0', '-1', 'null', 'undefined', '..', 'a'.repeat(600)),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
);

const idempotencyKey: fc.Arbitrary<string | null> = fc.option(
  fc.oneof(fc.uuid(), fc.stringMatching(/^[!-~]{1,300}$/)),
  { nil: null },
);

const fillPath = (op: Operation, values: readonly string[]): string =>
  op.pathParams.reduce((path, name, i) => path.replace(`{${name}}`, values[i]), op.path);

const isEnvelope = (body: unknown): boolean => {
  const error = (body as { error?: { code?: unknown; message?: unknown } })?.error;
  return typeof error?.code === 'string' && /^[a-z][a-z0-9_]*$/.test(error.code);
};

describe('fuzzing every mutating route of /docs-json as an admin', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let operations: Operation[];

  beforeAll(async () => {
    t = await startApp();
    admin = await t.auth('fuzzer', ['admin']);
    const doc = (await request(t.url).get('/docs-json')).body as OpenAPIObject;
    operations = operationsOf(doc);
  });
  afterAll(async () => t.close());

  /** Sends one request; returns its status after checking the answer is never a 500. */
  const send = async (
    method: Method,
    path: string,
    correlationId: string,
    body: unknown,
    key: string | null,
  ): Promise<number> => {
    let req = request(t.url)[method](path).set(admin).set('x-correlation-id', correlationId);
    if (key !== null) req = req.set('idempotency-key', key);
    const text = body === undefined ? undefined : toJson(body);
    const res = text === undefined ? await req : await req.type('json').send(text);
    if (res.status >= 500 || (res.status >= 400 && !isEnvelope(res.body))) {
      throw new Error(
        `${method.toUpperCase()} ${path} answered ${res.status} ${JSON.stringify(res.body)} ` +
          `to ${text === undefined ? 'no body' : text.slice(0, 500)}`,
      );
    }
    return res.status;
  };

  it('never answers 500, and nothing a refused request sent reaches the log', async () => {
    const targets = operations.filter((op) => MUTATING.has(op.method));
    const perRoute = BUDGET_MS / Math.max(1, targets.length);
    const refused = new Set<string>();
    let n = 0;
    for (const op of targets) {
      await fc.assert(
        fc.asyncProperty(
          bodies(op),
          fc.array(pathParam, { minLength: op.pathParams.length, maxLength: op.pathParams.length }),
          idempotencyKey,
          async (body, params, key) => {
            const correlationId = `fuzz-${n++}`;
            const method = op.method.toLowerCase() as Method;
            const status = await send(method, fillPath(op, params), correlationId, body, key);
            if (status < 200 || status >= 300) refused.add(correlationId);
          },
        ),
        {
          numRuns: RUNS_PER_ROUTE,
          plugins: [fc.interruptAfterTimeLimit(perRoute, { failOnInterrupt: false })],
        },
      );
    }
    // A refused command changes nothing: no event in the log carries a refused request's id.
    const auditor = await t.auth('auditor', ['auditor']);
    const leaked: unknown[] = [];
    for (let from = 0; ;) {
      const res = await request(t.url)
        .get(`/v1/events?fromPosition=${from}&limit=1000`)
        .set(auditor);
      expect(res.status).toBe(200);
      for (const e of res.body.events) if (refused.has(e.metadata.correlationId)) leaked.push(e);
      if (res.body.events.length === 0) break;
      from = res.body.nextPosition;
    }
    expect(leaked).toEqual([]);
    process.stdout.write(
      `fuzz: ${targets.length} mutating routes, ${n} requests, ${refused.size} refused\n`,
    );
  });

  it('never answers 500 to junk query strings on the read routes', async () => {
    const reads = operations.filter((op) => op.method === 'GET' && !op.public);
    const perRoute = 10_000 / Math.max(1, reads.length);
    for (const op of reads) {
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(
            fc.string({ minLength: 1, maxLength: 20 }),
            fc.oneof(fc.string(), fc.integer().map(String)),
            {
              maxKeys: 4,
            },
          ),
          fc.array(pathParam, { minLength: op.pathParams.length, maxLength: op.pathParams.length }),
          async (query, params) => {
            const qs = new URLSearchParams(query).toString();
            const path = `${fillPath(op, params)}${qs ? `?${qs}` : ''}`;
            await send('get', path, `fuzz-read`, undefined, null);
          },
        ),
        {
          numRuns: 50,
          plugins: [fc.interruptAfterTimeLimit(perRoute, { failOnInterrupt: false })],
        },
      );
    }
  });
});
