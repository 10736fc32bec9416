import request from 'supertest';
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

  it('answers an unknown route with 404 not_found', async () => {
    const res = await request(t.url)
      .get('/v1/nope')
      .set(await t.auth('a', ['admin']));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
