import { SignJWT } from 'jose';
import request from 'supertest';
import { startApp, TEST_SECRET, TestApp } from '../support/app';

/** The rules every list query shares: cursors bound to their query, filters checked alike. */
describe('list queries over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  beforeAll(async () => {
    t = await startApp();
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
  });
  afterAll(async () => t.close());

  const get = (path: string, auth = admin) => request(t.url).get(path).set(auth);
  /** A CPU session: with no node at all, it stays queued. */
  const queued = async (): Promise<string> =>
    (
      await request(t.url)
        .post('/v1/sessions')
        .set(alice)
        .send({ kind: 'cpu', cpu: 1, memoryGiB: 1 })
        .expect(201)
    ).body.sessionId;

  describe('an owner', () => {
    const owners = [
      ['with + and @', 'bob+ops@example.com'],
      ['with a space', 'alice smith'],
      ['of 256 characters', `u${'x'.repeat(255)}`],
      ['beyond ASCII', 'Jürgen 山田'],
    ];

    it.each(owners)(
      '%s creates, lists, is billed and is a tenant, as itself or by an admin',
      async (_what, owner) => {
        const user = await t.auth(owner, ['user']);
        const own = await request(t.url)
          .post('/v1/sessions')
          .set(user)
          .send({ kind: 'cpu', cpu: 1, memoryGiB: 1 })
          .expect(201);
        expect(own.body.owner).toBe(owner);
        const forOwner = await request(t.url)
          .post('/v1/sessions')
          .set(admin)
          .send({ kind: 'cpu', cpu: 1, memoryGiB: 1, owner })
          .expect(201);
        expect(forOwner.body.owner).toBe(owner);
        const q = encodeURIComponent(owner);
        for (const auth of [user, admin]) {
          const listed = await get(`/v1/sessions?owner=${q}`, auth).expect(200);
          expect(listed.body.items.map((i: { sessionId: string }) => i.sessionId)).toEqual([
            own.body.sessionId,
            forOwner.body.sessionId,
          ]);
          await get(`/v1/billing/records?owner=${q}`, auth).expect(200);
        }
        const pool = await request(t.url)
          .post('/v1/clusters/lq1/node-pools')
          .set(admin)
          .send({ name: 'p', kind: 'cpu', access: { tenants: [owner] } });
        // The cluster does not exist: the tenants passed validation (else 400).
        expect(pool.status).toBe(404);
      },
    );

    it.each([
      ['257 characters', 'a'.repeat(257)],
      ['a control character', 'ali\u0001ce'],
      ['whitespace at an end', 'alice '],
    ])('of %s is refused alike everywhere', async (_what, owner) => {
      const message =
        'must be 1-256 characters, with no control characters and no whitespace at either end';
      const token = await new SignJWT({ roles: ['user'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(owner)
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(TEST_SECRET));
      const asToken = await get('/v1/sessions', { authorization: `Bearer ${token}` });
      expect(asToken.status).toBe(401);
      expect(asToken.body.error.message).toBe(`token claim sub ${message}`);
      const q = encodeURIComponent(owner);
      const refusals = [
        await request(t.url)
          .post('/v1/sessions')
          .set(admin)
          .send({ kind: 'cpu', cpu: 1, memoryGiB: 1, owner }),
        await get(`/v1/sessions?owner=${q}`),
        await get(`/v1/billing/records?owner=${q}`),
        await request(t.url)
          .post('/v1/clusters/lq1/node-pools')
          .set(admin)
          .send({ name: 'p', kind: 'cpu', access: { tenants: [owner] } }),
      ];
      for (const res of refusals) {
        expect(res.status).toBe(400);
        expect(JSON.stringify(res.body.error.details.fields)).toContain(message);
      }
    });
  });

  /** The fields a 400 validation_failed names, with their problems. */
  const refusedFields = async (path: string) => {
    const res = await get(path);
    expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
      path,
      status: 400,
      code: 'validation_failed',
    });
    return res.body.error.details.fields as Array<{ field: string; problems: string[] }>;
  };

  describe('a query parameter', () => {
    const routes: Array<[string, string[]]> = [
      ['/v1/nodes', ['clusterId', 'poolId', 'role', 'status', 'mode', 'limit', 'cursor']],
      ['/v1/sessions', ['owner', 'nodeId', 'status', 'limit', 'cursor']],
      ['/v1/billing/records', ['owner', 'sessionId', 'from', 'to', 'limit', 'cursor']],
      ['/v1/notifications', ['since', 'limit', 'cursor']],
      ['/v1/operations', ['poolId', 'clusterId', 'status']],
      ['/v1/events', ['fromPosition', 'limit', 'type']],
      ['/v1/streams/session-x', ['fromRevision', 'limit']],
      ['/v1/clusters/c1/node-directives', ['since', 'wait']],
    ];
    const cases = routes.flatMap(([path, fields]) => fields.map((f) => [path, f]));

    it.each(cases)('%s ?%s= (empty) is 400 naming it', async (path, field) => {
      expect((await refusedFields(`${path}?${field}=`)).map((f) => f.field)).toEqual([field]);
    });

    it.each(cases)('%s ?%s given twice is 400 saying so', async (path, field) => {
      expect(await refusedFields(`${path}?${field}=1&${field}=2`)).toEqual([
        { field, problems: [`${field} was given more than once`] },
      ]);
    });

    it.each([
      ['/v1/nodes?poolId=garbage', 'poolId', 'poolId must be a pool id or none'],
      ['/v1/sessions?nodeId=garbage', 'nodeId', 'nodeId must be a node id'],
      [
        '/v1/billing/records?sessionId=not%20one',
        'sessionId',
        'sessionId must be a session id (1-200 letters, digits or ._:@-)',
      ],
      ['/v1/operations?poolId=garbage', 'poolId', 'poolId must be a pool id'],
      [
        '/v1/operations?clusterId=Not_A_Cluster',
        'clusterId',
        expect.stringMatching(/^clusterId must be a cluster id/),
      ],
      [
        '/v1/nodes?clusterId=-c1',
        'clusterId',
        expect.stringMatching(/^clusterId must be a cluster id/),
      ],
    ])('%s is 400 as the id in a path would be', async (path, field, problem) => {
      expect(await refusedFields(path)).toEqual([{ field, problems: [problem] }]);
    });

    it.each([
      ['/v1/operations/garbage', 'operationId', 'must be an operation id'],
      ['/v1/drains/garbage', 'drainId', 'must be a drain id'],
      ['/v1/nodes/garbage/drain-preview', 'nodeId', 'must be a node id'],
      ['/v1/nodes/garbage', 'nodeId', 'must be a node id'],
      ['/v1/node-pools/garbage', 'poolId', 'must be a pool id'],
      ['/v1/sessions/garbage', 'sessionId', 'must be a session id'],
      [
        '/v1/billing/sessions/not%20one/verify',
        'sessionId',
        'must be a session id (1-200 letters, digits or ._:@-)',
      ],
    ])('a path id %s is 400 saying what it must be', async (path, field, problem) => {
      expect(await refusedFields(path)).toEqual([{ field, problems: [problem] }]);
    });

    it('takes well-formed ids of nothing, `none` for nodes, and any cluster id that may exist', async () => {
      const none = '00000000-0000-4000-8000-000000000000';
      for (const path of [
        '/v1/nodes?poolId=none',
        `/v1/nodes?poolId=${none}`,
        `/v1/sessions?nodeId=${none}`,
        `/v1/billing/records?sessionId=${none}`,
        `/v1/operations?poolId=${none}`,
        '/v1/operations?clusterId=garbage',
        '/v1/nodes?clusterId=garbage',
      ]) {
        expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 });
      }
    });

    it.each(['0x10', '1e3', '%201', '1%20', '+1', '-0', '1.0', '1_000', 'Infinity'])(
      'refuses the integer %j: plain decimal digits only',
      async (text) => {
        for (const [path, field] of [
          ['/v1/nodes', 'limit'],
          ['/v1/events', 'fromPosition'],
          ['/v1/streams/session-x', 'fromRevision'],
          ['/v1/clusters/c1/node-directives', 'wait'],
        ]) {
          expect(await refusedFields(`${path}?${field}=${text}`)).toEqual([
            {
              field,
              problems: expect.arrayContaining([expect.stringContaining('decimal digits')]),
            },
          ]);
        }
      },
    );

    it('reads plain decimal integers, leading zeros too', async () => {
      const page = await get('/v1/events?fromPosition=0&limit=002').expect(200);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
    });

    it.each(['2026-12-03T10:00:00+0900', '2026-12-03T10:00:00+09', '2026-12-03T10:00:00-0130'])(
      'refuses the basic offset in %j for since, from and to',
      async (time) => {
        const q = encodeURIComponent(time);
        for (const [path, field] of [
          ['/v1/notifications', 'since'],
          ['/v1/billing/records', 'from'],
          ['/v1/billing/records', 'to'],
        ]) {
          expect((await refusedFields(`${path}?${field}=${q}`)).map((f) => f.field)).toEqual([
            field,
          ]);
        }
      },
    );

    it('takes the extended offset and Z', async () => {
      for (const time of ['2026-12-03T10:00:00+09:00', '2026-12-03T10:00:00Z', '2026-12-03']) {
        const q = encodeURIComponent(time);
        await get(`/v1/notifications?since=${q}`).expect(200);
        await get(`/v1/billing/records?from=${q}&to=${q}`).expect(200);
      }
    });

    // IsISO8601's strict check rebuilt such a date as `new Date("50-06-01")`, another year.
    it('takes times in the years 0000-0099, on real calendar days only', async () => {
      for (const time of [
        '0000-01-01T00:00:00Z',
        '0000-02-29T00:00:00Z',
        '0050-06-01',
        '0099-12-31T00:00:00Z',
      ]) {
        const q = encodeURIComponent(time);
        await get(`/v1/notifications?since=${q}`).expect(200);
        await get(`/v1/billing/records?from=${q}`).expect(200);
        await get(`/v1/billing/records?to=${q}`).expect(200);
      }
      const all = await get('/v1/notifications').expect(200);
      const since = await get('/v1/notifications?since=0000-01-01T00:00:00Z').expect(200);
      expect(since.body.items).toEqual(all.body.items);
      for (const time of ['0050-02-29', '0004-02-30T00:00:00Z', '0099-04-31T00:00:00Z']) {
        expect(await refusedFields(`/v1/notifications?since=${time}`)).toEqual([
          { field: 'since', problems: ['since must be a valid ISO 8601 date string'] },
        ]);
      }
    });
  });

  describe('a cursor', () => {
    it('is refused (400 naming cursor) with another filter, and taken with its own', async () => {
      const ids = [await queued(), await queued(), await queued(), await queued()];
      for (const id of ids.slice(2)) {
        await request(t.url).post(`/v1/sessions/${id}/terminate`).set(alice).send().expect(200);
      }
      const first = await get('/v1/sessions?owner=alice&status=queued&limit=1').expect(200);
      const cursor = first.body.nextCursor as string;
      expect(cursor).toEqual(expect.any(String));
      const other = await get(
        `/v1/sessions?owner=alice&status=terminated&limit=1&cursor=${cursor}`,
      );
      expect(other.status).toBe(400);
      expect(other.body.error.code).toBe('validation_failed');
      expect(other.body.error.details.fields).toEqual([
        { field: 'cursor', problems: [expect.any(String)] },
      ]);
      const dropped = await get(`/v1/sessions?owner=alice&limit=1&cursor=${cursor}`);
      expect(dropped.status).toBe(400);
      const same = await get(
        `/v1/sessions?owner=alice&status=queued&limit=1&cursor=${cursor}`,
      ).expect(200);
      expect(same.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual([ids[1]]);
    });
  });
});
