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
