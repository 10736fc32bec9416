import request from 'supertest';
import { startApp, TestApp } from '../support/app';

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

  describe('a cursor', () => {
    it('is refused (400 naming cursor) with another filter, and taken with its own', async () => {
      const ids = [await queued(), await queued(), await queued(), await queued()];
      for (const id of ids.slice(2)) {
        await request(t.url).post(`/v1/sessions/${id}/terminate`).set(alice).send().expect(200);
      }
      const first = await get('/v1/sessions?status=queued&limit=1').expect(200);
      const cursor = first.body.nextCursor as string;
      expect(cursor).toEqual(expect.any(String));
      const other = await get(`/v1/sessions?status=terminated&limit=1&cursor=${cursor}`);
      expect(other.status).toBe(400);
      expect(other.body.error.code).toBe('validation_failed');
      expect(other.body.error.details.fields).toEqual([
        { field: 'cursor', problems: [expect.any(String)] },
      ]);
      const dropped = await get(`/v1/sessions?limit=1&cursor=${cursor}`);
      expect(dropped.status).toBe(400);
      const same = await get(`/v1/sessions?status=queued&limit=1&cursor=${cursor}`).expect(200);
      expect(same.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual([ids[1]]);
    });
  });
});
