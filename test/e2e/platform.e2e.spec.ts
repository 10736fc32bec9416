import net from 'node:net';
import { randomUUID } from 'node:crypto';
import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, EventCodec } from '@fleet/kernel';
import { EventStore } from '@fleet/eventstore/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { DRAIN_STEP_QUEUE } from '../../apps/control-plane/src/drains/drain.saga';
import { OFFLINE_TIMEOUT_QUEUE } from '../../apps/control-plane/src/nodes/liveness/liveness.saga';
import { CORDON_SYNC_QUEUE } from '../../apps/control-plane/src/nodes/cordon-sync/cordon-sync.saga';
import {
  OPERATION_DEADLINE_QUEUE,
  OPERATION_STEP_QUEUE,
} from '../../apps/control-plane/src/operations/operations.saga';
import { QUEUE_TICK } from '../../apps/control-plane/src/sessions/session-queue.saga';
import { operationsOf } from '../../apps/control-plane/src/platform/openapi/operations';
import { EVENT_STORE, READ_MODELS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { startApp, TestApp } from '../support/app';

describe('the platform over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());

  it('refuses a request without a token with 401 unauthenticated', async () => {
    const res = await request(t.url).get('/v1/events');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
  });

  it('runs no Nest middleware: registering some fails loudly instead of being ignored', () => {
    // The adapter skips @fastify/middie (no request pays for its hook), so middleware added
    // later must not be silently dropped.
    expect(() => t.app.use((_req: unknown, _res: unknown, next: () => void) => next())).toThrow();
  });

  it('lets an auditor read the empty log', async () => {
    const res = await request(t.url)
      .get('/v1/events')
      .set(await t.auth('ann', ['auditor']));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ events: [], nextPosition: 0 });
  });

  it('refuses a user on the audit API with 403 forbidden', async () => {
    const res = await request(t.url)
      .get('/v1/events')
      .set(await t.auth('u', ['user']));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('refuses an unknown query field with 400 validation_failed', async () => {
    const res = await request(t.url)
      .get('/v1/events?bogus=1')
      .set(await t.auth('ann', ['auditor']));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });

  // class-transformer drops a key named like an Object.prototype member without a word.
  it.each([
    'constructor',
    '__proto__',
    'prototype',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '__defineGetter__',
  ])(
    'refuses a query or body field named %s like any unknown field (400 naming it)',
    async (key) => {
      for (const [path, who] of [
        ['/v1/nodes', 'auditor'],
        ['/v1/events', 'auditor'],
        ['/v1/sessions', 'user'],
        ['/v1/billing/records', 'user'],
      ] as const) {
        const query = await request(t.url)
          .get(`${path}?${key}=x`)
          .set(await t.auth('ann', [who]));
        expect({ path, status: query.status, fields: query.body.error?.details?.fields }).toEqual({
          path,
          status: 400,
          fields: [{ field: key, problems: [`property ${key} should not exist`] }],
        });
      }
      const before = await readLog(t);
      const body = await request(t.url)
        .post('/v1/sessions')
        .set(await t.auth('u', ['user']))
        .set('content-type', 'application/json')
        .send(`{"kind":"cpu","cpu":1,"memoryGiB":1,"${key}":1}`);
      // `__proto__` is refused by the parser, the others by validation: each named.
      expect(body.status).toBe(400);
      expect(body.body.error.code).toBe('validation_failed');
      expect(body.body.error.details.fields).toEqual([
        { field: key, problems: [`property ${key} should not exist`] },
      ]);
      expect(await readLog(t)).toEqual(before);
    },
  );

  it('answers a path parameter longer than any id in the envelope (400 validation_failed)', async () => {
    const res = await request(t.url)
      .get(`/v1/streams/node-${'a'.repeat(400)}`)
      .set(await t.auth('a', ['admin']));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.headers['x-correlation-id']).toBeTruthy();
  });

  it('answers an unknown route with 404 not_found', async () => {
    const res = await request(t.url)
      .get('/v1/nope')
      .set(await t.auth('a', ['admin']));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

const pinger = {
  name: 'pinger',
  decider: {
    decide: (command: { type: 'Ping'; data: { n: number } }) => [
      { type: 'Pinged' as const, data: command.data },
    ],
    evolve: (count: number) => count + 1,
    initialState: () => 0,
  },
  codec: new EventCodec<{ type: 'Pinged'; data: { n: number } }>({ Pinged: 1 }),
};

const contextFor = (commandId: string): CommandContext => ({
  commandId,
  correlationId: `corr-${commandId}`,
  causationId: commandId,
  actor: { sub: 'tester', roles: ['admin'] },
  now: new Date(),
});

/** Every event of the global log, read through the audit API. */
const readLog = async (t: TestApp): Promise<Array<{ position: number; type: string }>> => {
  const auth = await t.auth('auditor', ['auditor']);
  const events: Array<{ position: number; type: string }> = [];
  for (let from = 0; ;) {
    const res = await request(t.url).get(`/v1/events?fromPosition=${from}&limit=1000`).set(auth);
    expect(res.status).toBe(200);
    events.push(...res.body.events);
    if (res.body.events.length < 1000) return events;
    from = res.body.nextPosition;
  }
};

/** A mutating route of the API if a feature has one (else an unmatched path: bodies are parsed first). */
const someMutatingPath = async (t: TestApp): Promise<string> => {
  const doc = (await request(t.url).get('/docs-json')).body as OpenAPIObject;
  const post = operationsOf(doc).find((op) => op.method === 'POST' && !op.public);
  return post ? post.path.replace(/\{[^}]+\}/g, 'x-1') : '/v1/no-such-command';
};

describe('the operations endpoints', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());
  afterEach(() => jest.restoreAllMocks());

  it('answers /health/live without a token', async () => {
    const res = await request(t.url).get('/health/live');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('reports ready with every check once the runtime started', async () => {
    const res = await request(t.url).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: {
        runtime: { ok: true },
        eventStore: { ok: true },
        readModels: { ok: true },
        delayedJobs: { ok: true },
        subscriptions: { ok: true },
      },
      // Alone with its Redis, this replica leads.
      leader: true,
    });
  });

  it('reports not ready (503, same shape) when a store fails its ping', async () => {
    jest
      .spyOn(t.app.get<ReadModelStore>(READ_MODELS), 'ping')
      .mockRejectedValue(new Error('connect ECONNREFUSED mongo-0.internal:27017'));
    const res = await request(t.url).get('/health/ready');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('not_ready');
    // Served without a token: the client's text (hosts, ports) stays in the log.
    expect(res.body.checks.readModels).toEqual({ ok: false, error: 'not answering' });
    expect(JSON.stringify(res.body)).not.toContain('mongo-0');
    expect(res.body.checks.eventStore).toEqual({ ok: true });
  });

  it('serves Prometheus text with the http metrics of the requests it answered', async () => {
    await request(t.url)
      .get('/v1/events')
      .set(await t.auth('ann', ['auditor']));
    const res = await request(t.url).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toContain(
      'fleet_http_requests_total{method="GET",route="/v1/events",status="200"} 1',
    );
    expect(res.text).toMatch(
      /fleet_http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/v1\/events",status="200"\}/,
    );
    for (const name of [
      'fleet_commands_total',
      'fleet_command_duration_seconds',
      'fleet_events_appended_total',
      'fleet_subscription_lag_events',
      'fleet_subscription_failing',
      'fleet_delayed_jobs',
      'fleet_leader',
      'fleet_leader_epoch',
      'fleet_periodic_runs_total',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
    expect(res.text).toMatch(/^fleet_leader 1$/m);
    expect(res.text).toMatch(/^fleet_leader_epoch [1-9]\d*$/m);
  });

  it('labels an unmatched request by no route at all, never by its raw URL', async () => {
    await request(t.url).get('/v1/nodes-that-do-not-exist/123');
    const res = await request(t.url).get('/metrics');
    expect(res.text).toContain('route="unmatched",status="404"');
    expect(res.text).not.toContain('nodes-that-do-not-exist');
  });

  it('reports the backlog of every job queue the app runs', async () => {
    const res = await request(t.url).get('/metrics');
    // Every saga's queue (only cordon sync's was reported once); the webhook's runs only
    // when NOTIFY_WEBHOOK_URL is set.
    for (const queue of [
      OFFLINE_TIMEOUT_QUEUE,
      DRAIN_STEP_QUEUE,
      OPERATION_STEP_QUEUE,
      OPERATION_DEADLINE_QUEUE,
      CORDON_SYNC_QUEUE,
      QUEUE_TICK,
    ]) {
      for (const state of ['waiting', 'delayed', 'failed']) {
        expect(res.text).toMatch(
          new RegExp(`fleet_delayed_jobs\\{queue="${queue}",state="${state}"\\} \\d+`),
        );
      }
    }
  });

  it('answers an unexpected failure with 500 internal_error naming the correlation id only', async () => {
    jest
      .spyOn(t.app.get<EventStore>(EVENT_STORE), 'readAll')
      .mockRejectedValue(new Error('SQLITE_CORRUPT: database disk image is malformed at /data'));
    const res = await request(t.url)
      .get('/v1/events')
      .set(await t.auth('ann', ['auditor']));
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
    expect(res.body.error.details).toEqual({ correlationId: res.headers['x-correlation-id'] });
    expect(res.headers['x-correlation-id']).toBeTruthy();
    expect(JSON.stringify(res.body)).not.toMatch(/SQLITE|malformed|\/data|stack/i);
  });

  it('echoes a safe x-correlation-id and makes one up otherwise', async () => {
    const given = await request(t.url).get('/health/live').set('x-correlation-id', 'abc-123');
    expect(given.headers['x-correlation-id']).toBe('abc-123');
    const unsafe = await request(t.url).get('/health/live').set('x-correlation-id', 'a b\tc');
    expect(unsafe.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('commands as the metrics see them', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());

  it('counts each command by type and result, and the events it appended', async () => {
    const pipeline = t.app.get(CommandPipeline);
    await pipeline.handle(
      pinger,
      'pinger-1',
      { type: 'Ping', data: { n: 1 } },
      contextFor(randomUUID()),
    );
    await pipeline.handle(
      pinger,
      'pinger-2',
      { type: 'Ping', data: { n: 2 } },
      contextFor(randomUUID()),
    );
    const res = await request(t.url).get('/metrics');
    expect(res.text).toContain(
      'fleet_commands_total{command="Ping",aggregate="pinger",result="ok"} 2',
    );
    expect(res.text).toContain(
      'fleet_command_duration_seconds_count{command="Ping",result="ok"} 2',
    );
    expect(res.text).toContain('fleet_events_appended_total{aggregate="pinger"} 2');
  });
});

/** The app with one event in its log, so "appends nothing" is measured against a log that is not empty. */
const startWithOneEvent = async (): Promise<TestApp> => {
  const t = await startApp();
  await t.app
    .get(CommandPipeline)
    .handle(pinger, 'pinger-1', { type: 'Ping', data: { n: 1 } }, contextFor(randomUUID()));
  return t;
};

describe('bodies the server cannot read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startWithOneEvent();
  });
  afterAll(async () => t.close());

  it('refuses a 10 MB body with 413 payload_too_large and appends nothing', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post(await someMutatingPath(t))
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/json')
      .send(JSON.stringify({ padding: 'x'.repeat(10 * 1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(await readLog(t)).toEqual(before);
  });

  it('refuses malformed JSON with 400 validation_failed and appends nothing', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post(await someMutatingPath(t))
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/json')
      .send('{"kind": "gpu", ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.fields).toEqual([
      { field: 'body', problems: [expect.stringMatching(/^not valid JSON: /)] },
    ]);
    expect(await readLog(t)).toEqual(before);
  });

  it('names a __proto__ key nested in a body as the unknown field it is, nothing appended', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post('/v1/inventory/reports')
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/json')
      .send('{"clusterId":"c1","nodes":[{"hostname":"h","labels":{"__proto__":{"x":"1"}}}]}');
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([
      { field: 'nodes.0.labels.__proto__', problems: ['property __proto__ should not exist'] },
    ]);
    expect(await readLog(t)).toEqual(before);
  });

  it('refuses a body nested thousands of levels deep with 400, not a stack overflow', async () => {
    const before = await readLog(t);
    const depth = 5_000;
    const res = await request(t.url)
      .post(await someMutatingPath(t))
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/json')
      .send(`{"clusterId":${'['.repeat(depth)}"x"${']'.repeat(depth)}}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(await readLog(t)).toEqual(before);
  });
});

describe('commands that take no body', () => {
  let t: TestApp;
  const nodeId = '01a23c4e-0000-7000-8000-000000000000';
  const sessionId = '01a23c4e-0000-7000-8000-0000000000aa';
  beforeAll(async () => {
    t = await startWithOneEvent();
  });
  afterAll(async () => t.close());

  it.each([
    ['POST', `/v1/nodes/${nodeId}/uncordon`],
    ['DELETE', `/v1/nodes/${nodeId}`],
    ['POST', `/v1/sessions/${sessionId}/pause`],
    ['POST', `/v1/sessions/${sessionId}/resume`],
    ['POST', `/v1/sessions/${sessionId}/terminate`],
    ['POST', `/v1/sessions/${sessionId}/force-terminate`],
    ['POST', '/v1/clusters/c-x/repair'],
    ['DELETE', '/v1/node-pools/01a23c4e-0000-7000-8000-0000000000bb'],
  ])(
    '%s %s: a field is 400 naming it, nothing appended; no body or {} reach the command',
    async (method, path) => {
      const admin = await t.auth('a', ['admin']);
      const call = () =>
        method === 'POST'
          ? request(t.url).post(path).set(admin)
          : request(t.url).delete(path).set(admin);
      const before = await readLog(t);
      const refused = await call().send({ reason: 'x', force: true });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
        'reason',
        'force',
      ]);
      expect((await call().send([1])).status).toBe(400);
      // Nor does it take a query parameter: it is named, not ignored.
      const queried = await (
        method === 'POST'
          ? request(t.url).post(`${path}?x=1&__proto__=2`)
          : request(t.url).delete(`${path}?x=1&__proto__=2`)
      ).set(admin);
      expect(queried.status).toBe(400);
      expect(queried.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
        'x',
        '__proto__',
      ]);
      expect(await readLog(t)).toEqual(before);
      // Nothing by these ids exists: the command itself answers.
      expect((await call()).status).toBe(404);
      expect((await call().send({})).status).toBe(404);
      // A client that labels every request JSON, even one with nothing to send.
      expect((await call().set('content-type', 'application/json')).status).toBe(404);
    },
  );

  it('refuses a query parameter on a command with a body and on a read by id, nothing appended', async () => {
    const before = await readLog(t);
    const admin = await t.auth('a', ['admin']);
    const create = await request(t.url)
      .post('/v1/sessions?owner=bob')
      .set(admin)
      .send({ kind: 'cpu', cpu: 1, memoryGiB: 1 });
    expect(create.status).toBe(400);
    expect(create.body.error.details.fields).toEqual([
      { field: 'owner', problems: ['this route takes no query parameters'] },
    ]);
    const read = await request(t.url).get(`/v1/nodes/${nodeId}?junk=2`).set(admin);
    expect(read.status).toBe(400);
    expect(read.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['junk']);
    expect(await readLog(t)).toEqual(before);
    // 401 and 403 still come first.
    expect((await request(t.url).get(`/v1/nodes/${nodeId}?junk=2`)).status).toBe(401);
    const user = await t.auth('u', ['user']);
    expect((await request(t.url).get(`/v1/nodes/${nodeId}?junk=2`).set(user)).status).toBe(403);
  });

  it('keeps 401 and 403 ahead of the body check', async () => {
    const path = `/v1/nodes/${nodeId}/uncordon`;
    expect((await request(t.url).post(path).send({ x: 1 })).status).toBe(401);
    const auditor = await t.auth('aud', ['auditor']);
    expect((await request(t.url).post(path).set(auditor).send({ x: 1 })).status).toBe(403);
  });

  it('refuses a form body with 415: the API speaks JSON only', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post(`/v1/nodes/${nodeId}/cordon`)
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/x-www-form-urlencoded')
      .send('reason=maintenance');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect(await readLog(t)).toEqual(before);
  });

  it('refuses a JSON body in a charset other than UTF-8 with 415, and reads one labelled UTF-8', async () => {
    const before = await readLog(t);
    const admin = await t.auth('a', ['admin']);
    const utf16 = await request(t.url)
      .post(`/v1/nodes/${nodeId}/cordon`)
      .set(admin)
      .set('content-type', 'application/json; charset=utf-16le')
      .send(Buffer.from('{"reason":"maintenance"}', 'utf16le'));
    expect(utf16.status).toBe(415);
    expect(utf16.body.error).toMatchObject({
      code: 'unsupported_media_type',
      message: 'request bodies are JSON in UTF-8: charset utf-16le is not read',
    });
    expect(await readLog(t)).toEqual(before);
    const utf8 = await request(t.url)
      .post('/v1/sessions')
      .set(admin)
      .set('content-type', 'application/json; charset=UTF-8')
      .send(JSON.stringify({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 0 }));
    expect([utf8.status, utf8.body.error?.details?.fields?.[0]?.field]).toEqual([400, 'gpuCount']);
  });

  it('reads an empty JSON body as none: a command that needs one names each missing field', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post('/v1/sessions')
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'application/json');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('kind');
    expect(await readLog(t)).toEqual(before);
  });

  it('refuses a text/plain body with 415 unsupported_media_type, not a list of missing fields', async () => {
    const before = await readLog(t);
    const res = await request(t.url)
      .post('/v1/sessions')
      .set(await t.auth('a', ['admin']))
      .set('content-type', 'text/plain')
      .send('{"kind":"cpu","cpu":1,"memoryGiB":1}');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect(await readLog(t)).toEqual(before);
  });
});

describe('requests the HTTP parser refuses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startWithOneEvent();
  });
  afterAll(async () => t.close());

  /** Sends bytes as they are (no client would fix them up) and reads the answer to the close. */
  const raw = (text: string): Promise<{ status: number; body: unknown }> =>
    new Promise((resolve, reject) => {
      const { hostname, port } = new URL(t.url);
      const socket = net.connect(Number(port), hostname, () => socket.write(text));
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const answer = Buffer.concat(chunks).toString();
        const [head, ...rest] = answer.split('\r\n\r\n');
        resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')) });
      });
    });
  const post = (headers: string, body = '{"kind":"cpu","cpu":1}') =>
    `POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;

  it.each([
    ['a Content-Length that is not a number', post('Content-Length: ten\r\n')],
    ['two Content-Lengths', post('Content-Length: 22\r\nContent-Length: 23\r\n')],
    [
      'Content-Length with Transfer-Encoding',
      post('Content-Length: 22\r\nTransfer-Encoding: chunked\r\n'),
    ],
    ['an unknown method', 'FOO /v1/sessions HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'a control character in a header',
      'GET /v1/nodes HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\x01b\r\n\r\n',
    ],
    ['an HTTP version that is not 1.x', 'GET /v1/nodes HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['an HTTP/2.0 request line in HTTP/1 framing', 'GET /health/live HTTP/2.0\r\nHost: x\r\n\r\n'],
    ['a request line without a version (HTTP/0.9)', 'GET /health/live\r\nHost: x\r\n\r\n'],
    [
      'a command in HTTP/2.0 framing',
      post('Content-Length: 22\r\n').replace('HTTP/1.1', 'HTTP/2.0'),
    ],
  ])('answers %s with 400 validation_failed in the envelope, nothing appended', async (_, text) => {
    const before = await readLog(t);
    const res = await raw(text);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: { code: 'validation_failed', details: { fields: [{ field: 'request' }] } },
    });
    expect(await readLog(t)).toEqual(before);
  });

  it.each([
    ['Content-Length: 22\r\nContent-Length: 23\r\n', 'Content-Length is given more than once'],
    [
      'Content-Length: 22\r\nTransfer-Encoding: chunked\r\n',
      'Content-Length and Transfer-Encoding are both set',
    ],
  ])('names the framing problem of %j as it is', async (headers, problem) => {
    const res = await raw(post(headers));
    expect(res.body).toMatchObject({
      error: { details: { fields: [{ field: 'request', problems: [problem] }] } },
    });
  });

  it('answers once a caller turned away before its body was read, when that body does not parse', async () => {
    // 401 is sent before the body is read; the parser then fails on the body. A second
    // answer (400) would pair with the next request of a proxy sharing the connection.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1', () => {
        socket.write(
          'POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
            'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
        );
        // The rest of the body once the answer has gone out (a slow client).
        setTimeout(() => socket.writable && socket.write('zz\r\nbad\r\n0\r\n\r\n'), 200);
      });
      let text = '';
      socket.on('data', (c) => (text += c.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 401']);
  });

  it('answers headers over the size limit with 431 headers_too_large in the envelope', async () => {
    const res = await raw(
      `GET /v1/nodes HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
    );
    expect(res.status).toBe(431);
    expect(res.body).toMatchObject({ error: { code: 'headers_too_large' } });
  });

  it('answers an expectation other than 100-continue with 417 in the envelope', async () => {
    const res = await raw('GET /v1/nodes HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n');
    expect(res.status).toBe(417);
    expect(res.body).toMatchObject({ error: { code: 'expectation_failed' } });
  });
});
