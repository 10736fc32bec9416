import { execFile } from 'node:child_process';
import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import { registeredRoutes } from '../../apps/control-plane/src/platform/observability/install';
import { operationsOf } from '../../apps/control-plane/src/platform/openapi/operations';
import { startApp, TestApp } from '../support/app';

/**
 * swagger-parser loads an ESM-only dependency that jest (on Node 20) cannot require, while
 * plain Node can: validate in a child process and hand back its verdict.
 */
const validateOpenApi = (document: object): Promise<{ ok: boolean; error?: string }> =>
  new Promise((resolve, reject) => {
    const script = `
      let text = '';
      process.stdin.on('data', (c) => (text += c));
      process.stdin.on('end', () =>
        require('@apidevtools/swagger-parser')
          .validate(JSON.parse(text))
          .then(() => process.stdout.write(JSON.stringify({ ok: true })))
          .catch((e) => process.stdout.write(JSON.stringify({ ok: false, error: e.message }))),
      );`;
    const child = execFile(process.execPath, ['-e', script], { cwd: process.cwd() }, (err, out) =>
      err ? reject(err) : resolve(JSON.parse(out) as { ok: boolean; error?: string }),
    );
    child.stdin!.end(JSON.stringify(document));
  });

// The document's own endpoints (and the UI's assets) are served beside the API, not part of it.
const isDocsRoute = (url: string): boolean => url === '/docs' || url.startsWith('/docs');

describe('the OpenAPI document at /docs-json', () => {
  let t: TestApp;
  let document: OpenAPIObject;

  beforeAll(async () => {
    t = await startApp();
    const res = await request(t.url).get('/docs-json');
    expect(res.status).toBe(200);
    document = res.body as OpenAPIObject;
  });
  afterAll(async () => t.close());

  it('is served without a token and is a valid OpenAPI 3 document', async () => {
    expect(document.openapi).toMatch(/^3\./);
    await expect(validateOpenApi(document)).resolves.toEqual({ ok: true });
    // And the validator does refuse a broken one (no info, no paths).
    await expect(validateOpenApi({ openapi: '3.0.0' })).resolves.toMatchObject({ ok: false });
  });

  it('lists every route the app registered, and nothing else', () => {
    const registered = registeredRoutes(t.app)
      .filter((r) => r.method !== 'HEAD' && !isDocsRoute(r.url))
      .map((r) => `${r.method} ${r.url}`);
    const documented = operationsOf(document).map((op) => `${op.method} ${op.route}`);
    // Sanity: the hook saw the platform's own routes, so an empty list cannot pass.
    expect(registered).toEqual(
      expect.arrayContaining(['GET /health/live', 'GET /metrics', 'GET /v1/events']),
    );
    expect([...documented].sort()).toEqual([...new Set(registered)].sort());
  });

  it('names the bearer scheme (JWT) and requires it unless a route is public', () => {
    expect(document.components?.securitySchemes?.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    const ops = operationsOf(document);
    expect(
      ops
        .filter((op) => op.public)
        .map((op) => `${op.method} ${op.path}`)
        .sort(),
    ).toEqual(['GET /health/live', 'GET /health/ready', 'GET /metrics']);
  });

  it('requires a request body only where the body has a required field', () => {
    // Every field optional, but at least one needed (an empty body is 400): required.
    const AT_LEAST_ONE_FIELD = [
      'post /v1/node-pools/{poolId}/resize',
      'patch /v1/node-pools/{poolId}',
    ];
    type Body = { required?: boolean; content?: Record<string, { schema?: { $ref?: string } }> };
    const schemas = (document.components?.schemas ?? {}) as Record<string, { required?: string[] }>;
    const seen: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item) as [string, { requestBody?: Body }][]) {
        const body = op.requestBody;
        const ref = body?.content?.['application/json']?.schema?.$ref;
        if (!body || !ref) continue;
        const needed =
          (schemas[ref.split('/').pop()!]?.required ?? []).length > 0 ||
          AT_LEAST_ONE_FIELD.includes(`${method} ${path}`);
        seen.push(`${method} ${path}`);
        expect({ [`${method} ${path}`]: body.required === true }).toEqual({
          [`${method} ${path}`]: needed,
        });
      }
    }
    // The optional bodies of API.md are among those checked.
    expect(seen).toEqual(
      expect.arrayContaining(['post /v1/nodes/{nodeId}/cordon', 'post /v1/nodes/{nodeId}/drain']),
    );
  });

  it('describes error responses with the error envelope', () => {
    const envelope = document.components?.schemas?.ErrorEnvelopeDto as {
      properties: Record<string, { $ref?: string }>;
    };
    expect(envelope.properties.error.$ref).toBe('#/components/schemas/ErrorBodyDto');
    expect(document.components?.schemas?.ErrorBodyDto).toMatchObject({
      required: expect.arrayContaining(['code', 'message', 'details']),
    });
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item) as [string, { responses?: object }][]) {
        const responses = (op.responses ?? {}) as Record<string, { content?: object }>;
        expect({ [`${method} ${path}`]: responses['400']?.content }).toEqual({
          [`${method} ${path}`]: {
            'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelopeDto' } },
          },
        });
      }
    }
    const protectedMutations = operationsOf(document).filter(
      (op) => !op.public && op.method !== 'GET',
    );
    for (const op of protectedMutations) {
      const responses = document.paths[op.path][op.method.toLowerCase() as 'post']!.responses;
      expect(Object.keys(responses)).toEqual(
        expect.arrayContaining(['400', '401', '403', '404', '409', '413']),
      );
    }
    const events = document.paths['/v1/events'].get!.responses;
    expect(Object.keys(events)).toEqual(expect.arrayContaining(['400', '401', '403']));
  });

  it('serves the UI at /docs without a token', async () => {
    const page = await request(t.url).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('swagger-ui');
    const init = await request(t.url).get('/docs/swagger-ui-init.js');
    expect(init.text).toContain('/docs-json');
    const bundle = await request(t.url).get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
  });
});

describe('a malformed id in any path', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({}, { redis: false });
  });
  afterAll(async () => t.close());

  // Stream ids are free-form (any stream of the log), and so nearly are a member's sub (any
  // text without control characters, as a token's): `Bad ID!` is one. Every other id has a format.
  const FREE_FORM = new Set(['streamId', 'sub']);

  it('is 400 validation_failed naming it, not a 404 for something that could not exist', async () => {
    const doc = (await request(t.url).get('/docs-json')).body as OpenAPIObject;
    const admin = await t.auth('root', ['admin']);
    const seen: string[] = [];
    for (const op of operationsOf(doc)) {
      for (const bad of op.pathParams.filter((p) => !FREE_FORM.has(p))) {
        const path = op.pathParams.reduce(
          (p, name) =>
            p.replace(
              `{${name}}`,
              name === bad ? 'Bad%20ID!' : '00000000-0000-4000-8000-000000000000',
            ),
          op.path,
        );
        const method = op.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
        const res = await request(t.url)[method](path).set(admin);
        const named = (res.body.error?.details?.fields ?? []).map(
          (f: { field: string }) => f.field,
        );
        // With no body sent, a route that takes one may name its body's fields first.
        expect({ route: `${op.method} ${op.path}`, status: res.status }).toEqual({
          route: `${op.method} ${op.path}`,
          status: 400,
        });
        if (op.bodyProperties === null) expect(named).toEqual([bad]);
        seen.push(bad);
      }
    }
    expect(new Set(seen)).toEqual(
      new Set([
        'nodeId',
        'sessionId',
        'drainId',
        'operationId',
        'poolId',
        'clusterId',
        'meshRequestId',
      ]),
    );
  });
});

describe('a caller turned away', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({}, { redis: false });
  });
  afterAll(async () => t.close());

  const ID = '00000000-0000-4000-8000-000000000000';
  const pathOf = (op: { path: string; pathParams: readonly string[] }): string =>
    op.pathParams.reduce(
      (p, name) => p.replace(`{${name}}`, name === 'clusterId' ? 'c1' : ID),
      op.path,
    );

  it('hears 401 or 403 on every route before its body is judged, and nothing is appended', async () => {
    const doc = (await request(t.url).get('/docs-json')).body as OpenAPIObject;
    const user = await t.auth('u', ['user']);
    const before = (
      await request(t.url)
        .get('/v1/events')
        .set(await t.auth('a', ['admin']))
    ).body;
    const seen: string[] = [];
    for (const op of operationsOf(doc).filter((o) => !o.public)) {
      const method = op.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
      const send = (headers: Record<string, string>) => {
        const call = request(t.url)[method](`${pathOf(op)}?bogus=1`);
        return call.set({ 'content-type': 'application/json', ...headers }).send('{"not json');
      };
      const anonymous = await send({});
      expect({ route: `${op.method} ${op.path}`, status: anonymous.status }).toEqual({
        route: `${op.method} ${op.path}`,
        status: 401,
      });
      expect(anonymous.body.error.code).toBe('unauthenticated');
      // A user may call some routes (its sessions, its bill): those judge the body next. On a
      // cluster-scoped route that reads a query, a user of no cluster is turned away first
      // with the 404 of a cluster it may not see.
      const asUser = await send(user);
      if (asUser.status === 403) seen.push(`${op.method} ${op.path}`);
      else if (asUser.status === 404 && op.path.includes('{clusterId}')) {
        expect(asUser.body.error.code).toBe('not_found');
      } else expect(asUser.status).toBe(400);
    }
    // Sanity: the admin routes are many, so a guard answering 400 first cannot pass.
    expect(seen).toEqual(
      expect.arrayContaining(['POST /v1/inventory/reports', 'POST /v1/nodes/{nodeId}/cordon']),
    );
    const after = (
      await request(t.url)
        .get('/v1/events')
        .set(await t.auth('a', ['admin']))
    ).body;
    expect(after).toEqual(before);
  });

  it('answers 401 to a body past the route limit, or in a type no route reads', async () => {
    const big = await request(t.url)
      .post('/v1/inventory/reports')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ padding: 'x'.repeat(10 * 1024 * 1024) }));
    expect(big.status).toBe(401);
    const form = await request(t.url)
      .post('/v1/inventory/reports')
      .set('content-type', 'application/x-www-form-urlencoded')
      .send('a=1');
    expect(form.status).toBe(401);
    const wrongRole = await request(t.url)
      .post('/v1/inventory/reports')
      .set(await t.auth('ann', ['auditor']))
      .set('content-type', 'application/json; charset=utf-16')
      .send('{}');
    expect(wrongRole.status).toBe(403);
  });

  it('answers HEAD on a read without a token with 401', async () => {
    expect((await request(t.url).head('/v1/nodes')).status).toBe(401);
    expect(
      (
        await request(t.url)
          .head('/v1/nodes')
          .set(await t.auth('a', ['admin']))
      ).status,
    ).toBe(200);
  });
});
