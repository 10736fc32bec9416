import request from 'supertest';
import { EventStore, LogPosition } from '@fleet/eventstore/port';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import {
  IDEMPOTENCY_STORE,
  idempotencyClock,
} from '../../apps/control-plane/src/platform/idempotency/idempotency.hooks';
import { IdempotencyStore } from '../../apps/control-plane/src/platform/idempotency/idempotency.store';
import { UnavailableError } from '@fleet/kernel';
import { untilRunning } from '../support/clusters';
import { startApp, TestApp } from '../support/app';
import { gpuNode, report } from '../support/reports';

/** Idempotency-Key over HTTP: replays, refusals, precedence and races, on the real app. */
describe.each([
  ['SQLite', false],
  ['Redis', true],
])('Idempotency-Key (keys kept in %s)', (_store, redis) => {
  let t: TestApp;
  let store: EventStore;
  let admin: Record<string, string>;
  const cluster = (name: string) => ({
    name,
    k8sVersion: '1.30.4',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
  });
  const create = (key: string | undefined, body: object, who = admin) => {
    const req = request(t.url).post('/v1/clusters').set(who);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const head = () => store.headPosition();
  /**
   * Events the request caused, directly or through reactions: sagas and reactors keep the
   * correlation id of the request they follow (other background work may append meanwhile).
   */
  const appendedBy = async (res: { headers: Record<string, string> }, after: LogPosition) =>
    (await store.readAll({ after, limit: 10_000 })).filter(
      (e) => e.metadata.correlationId === res.headers['x-correlation-id'],
    );
  const send = (clusterId: string, nodes: ReturnType<typeof gpuNode>[]) =>
    request(t.url).post('/v1/inventory/reports').set(admin).send(report(clusterId, nodes));

  beforeAll(async () => {
    t = await startApp({}, { redis });
    store = t.app.get<EventStore>(EVENT_STORE);
    admin = await t.auth('root', ['admin']);
  });
  afterAll(async () => t.close());

  it('answers a done command even when its response cannot be kept, and a retry appends nothing new', async () => {
    const keys = t.app.get<IdempotencyStore>(IDEMPOTENCY_STORE);
    const put = jest
      .spyOn(keys, 'put')
      .mockRejectedValueOnce(new UnavailableError('idempotency store (Redis)', new Error('down')));
    const start = await head();
    const first = await create('k-unkept', cluster('unkept'));
    expect(put).toHaveBeenCalled();
    put.mockRestore();
    expect(first.status).toBe(201);
    const after = await head();
    const again = await create('k-unkept', cluster('unkept'));
    // Decided again under the same command id: the same cluster, nothing appended by the retry.
    expect(again.body.clusterId).toBe(first.body.clusterId);
    expect(await appendedBy(again, after)).toEqual([]);
    expect(after).toBeGreaterThan(start);
  });

  it('replays the first response, status and body, and appends nothing for the retry', async () => {
    const start = await head();
    const first = await create('k-replay', cluster('replay'));
    expect(first.status).toBe(201);
    // The check below sees what a request appends: the first one did append.
    expect((await appendedBy(first, start)).map((e) => e.type)).toContain('ClusterRequested.v1');
    const before = await head();
    const again = await create('k-replay', cluster('replay'));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await appendedBy(again, before)).toEqual([]);
    // Key order in the body does not make it another body.
    const reordered = await create('k-replay', {
      serviceCidr: '10.96.0.0/12',
      podCidr: '10.244.0.0/16',
      k8sVersion: '1.30.4',
      name: 'replay',
    });
    expect(reordered.status).toBe(201);
    expect(reordered.body).toEqual(first.body);
    expect(await appendedBy(reordered, before)).toEqual([]);
  });

  it('names a key by the route the router matched: the same path percent-encoded replays', async () => {
    const first = await create('k-encoded', cluster('encoded'));
    expect(first.status).toBe(201);
    const before = await head();
    for (const path of ['/v1/%63lusters', '/v1/cluster%73']) {
      const again = await request(t.url)
        .post(path)
        .set(admin)
        .set('Idempotency-Key', 'k-encoded')
        .send(cluster('encoded'));
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(await appendedBy(again, before)).toEqual([]);
    }
  });

  it('refuses the same key with another body: 409 idempotency_key_reused, nothing appended', async () => {
    await create('k-reuse', cluster('reuse-a')).expect(201);
    const before = await head();
    const res = await create('k-reuse', cluster('reuse-b'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('idempotency_key_reused');
    expect(await appendedBy(res, before)).toEqual([]);
  });

  it('counts the query string as part of the request: the same key and body with ?x=1 is 409, nothing appended', async () => {
    await create('k-query', cluster('query')).expect(201);
    const before = await head();
    const res = await request(t.url)
      .post('/v1/clusters?x=1')
      .set(admin)
      .set('Idempotency-Key', 'k-query')
      .send(cluster('query'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('idempotency_key_reused');
    expect(await appendedBy(res, before)).toEqual([]);
    // The request as first sent still replays.
    await create('k-query', cluster('query')).expect(201);
  });

  it('with the key store down, answers 401 and 403 first and 503 to a caller it would serve, nothing appended', async () => {
    const keys = t.app.get<IdempotencyStore>(IDEMPOTENCY_STORE);
    const get = jest
      .spyOn(keys, 'get')
      .mockRejectedValue(new UnavailableError('idempotency store (Redis)', new Error('down')));
    try {
      const before = await head();
      const anonymous = await request(t.url)
        .post('/v1/clusters')
        .set('Idempotency-Key', 'k-down')
        .send(cluster('down'));
      expect(anonymous.status).toBe(401);
      const user = await create('k-down', cluster('down'), await t.auth('u', ['auditor']));
      expect(user.status).toBe(403);
      expect(user.body.error.code).toBe('forbidden');
      const res = await create('k-down', cluster('down'));
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('unavailable');
      expect(await appendedBy(res, before)).toEqual([]);
      expect(await appendedBy(user, before)).toEqual([]);
    } finally {
      get.mockRestore();
    }
    await create('k-down', cluster('down')).expect(201);
  });

  it('answers a pool create retried after its kept answer was lost (Redis emptied) with the pool it made, not 409 pool_name_taken', async () => {
    const clusterId = (await create('k-pool-cluster', cluster('pooled')).expect(201)).body
      .clusterId as string;
    await untilRunning(t.url, admin, clusterId); // pools are made only in a running cluster
    const createPool = () =>
      request(t.url)
        .post(`/v1/clusters/${clusterId}/node-pools`)
        .set(admin)
        .set('Idempotency-Key', 'k-pool')
        .send({ name: 'workers', kind: 'cpu' });
    const first = await createPool();
    expect(first.status).toBe(201);
    const keys = t.app.get<IdempotencyStore>(IDEMPOTENCY_STORE);
    const get = jest.spyOn(keys, 'get').mockResolvedValueOnce(null); // the key is gone
    const before = await head();
    const retried = await createPool();
    get.mockRestore();
    expect(retried.status).toBe(201);
    expect(retried.body.poolId).toBe(first.body.poolId);
    expect(retried.body.name).toBe('workers');
    expect(await appendedBy(retried, before)).toEqual([]);
  });

  it('takes a key reused after its 24 h as a new command: done and appended, not a silent replay of the first', async () => {
    const day = 24 * 60 * 60 * 1000;
    const who = await t.auth('later', ['admin']);
    const first = await create('k-expired', cluster('expired-a'), who);
    expect(first.status).toBe(201);
    const keys = t.app.get<IdempotencyStore>(IDEMPOTENCY_STORE);
    // 25 h later: the store has let the key go (as its TTL does).
    const get = jest.spyOn(keys, 'get').mockResolvedValue(null);
    const clock = jest
      .spyOn(idempotencyClock, 'now')
      .mockImplementation(() => Date.now() + day + 60 * 60 * 1000);
    try {
      const before = await head();
      const again = await create('k-expired', cluster('expired-b'), who);
      expect(again.status).toBe(201);
      expect(again.body.clusterId).not.toBe(first.body.clusterId);
      const requested = (await appendedBy(again, before)).find(
        (e) => e.type === 'ClusterRequested.v1',
      );
      expect(requested?.data).toMatchObject({ name: 'expired-b' });
    } finally {
      clock.mockRestore();
      get.mockRestore();
    }
  });

  describe('a first use whose answer was lost', () => {
    const loseTheAnswer = () =>
      jest
        .spyOn(t.app.get<IdempotencyStore>(IDEMPOTENCY_STORE), 'put')
        .mockRejectedValueOnce(
          new UnavailableError('idempotency store (Redis)', new Error('down')),
        );

    it('is found by a retry after midnight: the same command, nothing appended', async () => {
      const put = loseTheAnswer();
      const first = await create('k-midnight', cluster('midnight'));
      expect(put).toHaveBeenCalled();
      put.mockRestore();
      expect(first.status).toBe(201);
      // The retry lands in the next day's window (just past 00:00 UTC).
      const day = 24 * 60 * 60 * 1000;
      const nextDay = (Math.floor(Date.now() / day) + 1) * day + 1000;
      const clock = jest.spyOn(idempotencyClock, 'now').mockImplementation(() => nextDay);
      try {
        const after = await head();
        const again = await create('k-midnight', cluster('midnight'));
        expect(again.status).toBe(201);
        expect(again.body.clusterId).toBe(first.body.clusterId);
        expect(await appendedBy(again, after)).toEqual([]);
      } finally {
        clock.mockRestore();
      }
    });

    it('refuses another body under the key (409), appending nothing', async () => {
      const put = loseTheAnswer();
      const first = await create('k-lost-other', cluster('lost-a'));
      put.mockRestore();
      expect(first.status).toBe(201);
      const after = await head();
      const other = await create('k-lost-other', cluster('lost-b'));
      expect(other.status).toBe(409);
      expect(other.body.error.code).toBe('idempotency_key_reused');
      expect(await appendedBy(other, after)).toEqual([]);
      // The first body is still that command.
      const again = await create('k-lost-other', cluster('lost-a'));
      expect(again.status).toBe(201);
      expect(again.body.clusterId).toBe(first.body.clusterId);
    });
  });

  it('frees the key of a refused request: a corrected body, or a caller refused again, is not 409', async () => {
    const bad = await create('k-fix', { ...cluster('fix'), podCidr: 'not-a-cidr' });
    expect(bad.status).toBe(400);
    const fixed = await create('k-fix', cluster('fix'));
    expect(fixed.status).toBe(201);
    const user = await t.auth('u-fix', ['user']);
    // A user may create its own clusters, not one for another owner (the body says so).
    const forOther = (name: string) => ({ ...cluster(name), owner: 'someone-else' });
    expect((await create('k-user', forOther('user-a'), user)).status).toBe(403);
    expect((await create('k-user', forOther('user-b'), user)).status).toBe(403);
  });

  it('keeps keys apart per caller: the same key from another admin is a new command', async () => {
    const mine = await create('k-shared', cluster('shared'));
    const theirs = await create('k-shared', cluster('shared'), await t.auth('other', ['admin']));
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.clusterId).not.toBe(mine.body.clusterId);
  });

  it('runs concurrent requests with one key once: every answer is the first one', async () => {
    const before = await head();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => create('k-race', cluster('race'))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.body.clusterId)).size).toBe(1);
    const appended = (await store.readAll({ after: before, limit: 100 })).filter((e) =>
      e.type.startsWith('ClusterRequested'),
    );
    expect(appended).toHaveLength(1);
  });

  it('keeps only successes: a refused command under a key is decided afresh on retry', async () => {
    const reported = await send('idem-c1', [gpuNode('idem-host-1')]);
    const nodeId = reported.body.nodes[0].nodeId as string;
    // An online node cannot be deleted: 409, not kept.
    const refused = await request(t.url)
      .delete(`/v1/nodes/${nodeId}`)
      .set(admin)
      .set('Idempotency-Key', 'k-delete');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('node_not_offline');
    // Once the node is offline (kubelet NotReady), the same key deletes it: 204, replayed as 204.
    await send('idem-c1', [gpuNode('idem-host-1', 2, 'L40S', { kubeletReady: false })]).expect(200);
    const deleted = await request(t.url)
      .delete(`/v1/nodes/${nodeId}`)
      .set(admin)
      .set('Idempotency-Key', 'k-delete');
    expect(deleted.status).toBe(204);
    const before = await head();
    const replayed = await request(t.url)
      .delete(`/v1/nodes/${nodeId}`)
      .set(admin)
      .set('Idempotency-Key', 'k-delete');
    expect(replayed.status).toBe(204);
    expect(replayed.text).toBe('');
    expect(await appendedBy(replayed, before)).toEqual([]);
  });

  it('takes no body and an empty body as the same request: a retry that adds {} replays, nothing appended', async () => {
    const reported = await send('idem-c2', [gpuNode('idem-host-2')]);
    const nodeId = reported.body.nodes[0].nodeId as string;
    const cordon = () =>
      request(t.url)
        .post(`/v1/nodes/${nodeId}/cordon`)
        .set(admin)
        .set('Idempotency-Key', 'k-empty');
    const first = await cordon();
    expect(first.status).toBe(200);
    const before = await head();
    const again = await cordon().send({});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await appendedBy(again, before)).toEqual([]);
    // A body that does say something is another request.
    const other = await cordon().send({ reason: 'maintenance' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('refuses a malformed key with 400 naming it, after 401 and 403', async () => {
    const bad = 'has space';
    const anonymous = await request(t.url)
      .post('/v1/clusters')
      .set('Idempotency-Key', bad)
      .send(cluster('bad'));
    expect(anonymous.status).toBe(401);
    const user = await create(bad, cluster('bad'), await t.auth('u', ['auditor']));
    expect(user.status).toBe(403);
    const before = await head();
    const res = await create(bad, cluster('bad'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(res.body.error.details)).toContain('Idempotency-Key');
    expect(await appendedBy(res, before)).toEqual([]);
    const long = await create('x'.repeat(256), cluster('bad'));
    expect(long.status).toBe(400);
    expect(await appendedBy(long, before)).toEqual([]);
  });

  it('does not replay to a token with other roles: it is authorised afresh', async () => {
    await create('k-roles', cluster('roles')).expect(201);
    // The same subject, now only an auditor: the guard refuses it, no stored answer leaks.
    const res = await create('k-roles', cluster('roles'), await t.auth('root', ['auditor']));
    expect(res.status).toBe(403);
  });

  it('ignores the key on reads', async () => {
    const res = await request(t.url)
      .get('/v1/nodes')
      .set(admin)
      .set('Idempotency-Key', 'has space');
    expect(res.status).toBe(200);
  });
});
