import net from 'node:net';
import Redis from 'ioredis';
import request from 'supertest';
import { clusterLivenessAggregate } from '../../apps/control-plane/src/clusters/cluster-liveness.decider';
import { clusterStreamId } from '../../apps/control-plane/src/clusters/cluster.events';
import {
  LivenessSaga,
  REPORTING_TRUST_MS,
} from '../../apps/control-plane/src/nodes/liveness/liveness.saga';
import { READ_MODELS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { CommandPipeline } from '@fleet/cqrs';
import { systemContext, uuidV7 } from '@fleet/kernel';
import type { ReadModelStore } from '@fleet/readmodels/port';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

type Ev = {
  type: string;
  streamId: string;
  eventId: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
};

/**
 * A node silent for half a window takes no new session; the session waits in the queue and is
 * placed once the node reports again (no event frees anything: the queue's safety pass must).
 */
const queuedWhileSilentThenPlaced = async (t: TestApp, clusterId: string): Promise<void> => {
  const admin = await t.auth('root', ['admin']);
  const quietOperator = await t.auth('op-q', ['operator'], [clusterId]);
  const send = () =>
    request(t.url)
      .post('/v1/inventory/reports')
      .set(quietOperator)
      .send(report(clusterId, [gpuNode('quiet-01', 1, 'HPC_GPU')]));
  const nodeId: string = (await send()).body.nodes[0].nodeId;
  await eventually(
    async () =>
      (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body.status === 'ready',
  );
  await sleep(1300); // past half the 2 s window since its report, not yet offline
  const user = await t.auth('u-quiet', ['user']);
  const created = await request(t.url)
    .post('/v1/sessions')
    .set(user)
    .send({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 1 });
  expect(created.status).toBe(201);
  // On a node that may be dead: a session placed there would end with it a moment later.
  expect(created.body.status).toBe('queued');
  const sessionId: string = created.body.sessionId;
  const placed = await eventually(async () => {
    await send();
    const s = (await request(t.url).get(`/v1/sessions/${sessionId}`).set(user)).body;
    return s.status === 'running' ? s : null;
  }, 9000);
  expect(placed.nodeId).toBe(nodeId);
};

describe('node liveness with NODE_STALE_SEC=2 (in-process jobs, no Redis)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '2' }, { redis: false });
  });
  afterAll(async () => t.close());

  it('places no session on a node silent for half a window, and places it once the node reports again', async () => {
    await queuedWhileSilentThenPlaced(t, 'cq');
  });
});

describe('node liveness with NODE_STALE_SEC=2 (BullMQ on the real Redis)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '2' });
    admin = await t.auth('root', ['admin']);
    operator = await t.auth(
      'op',
      ['operator'],
      ['c1', 'cm', 'cf', 'cr', 'cs', 'co', 'cj', 'cz', 'ct', 'cx'],
    );
  });
  afterAll(async () => t.close());

  const post = (body: object) =>
    request(t.url).post('/v1/inventory/reports').set(operator).send(body);
  const events = async (type: string): Promise<Ev[]> =>
    (await request(t.url).get(`/v1/events?limit=1000&type=${type}`).set(admin)).body.events;
  const node = async (nodeId: string) =>
    (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body;

  it('takes a silent node offline between 2 s and 4 s after its last report', async () => {
    const reportedAt = Date.now(); // before sending: the server's clock starts on receipt
    const res = await post(report('c1', [gpuNode('silent-01')]));
    const nodeId = res.body.nodes[0].nodeId;
    await eventually(async () => (await node(nodeId)).status === 'offline', 8000);
    const noticed = Date.now() - reportedAt;
    expect(noticed).toBeGreaterThanOrEqual(2000);
    expect(noticed).toBeLessThan(4000);
    expect((await node(nodeId)).offlineReason).toBe('heartbeat_timeout');
    const [offline] = (await events('NodeWentOffline')).filter(
      (e) => e.streamId === `node-${nodeId}`,
    );
    const lag =
      Date.parse(offline.data.at as string) - Date.parse(offline.data.lastSeenAt as string);
    expect(lag).toBeGreaterThanOrEqual(2000);
    expect(lag).toBeLessThan(4000);
  });

  it('places no session on a node silent for half a window, and places it once the node reports again', async () => {
    await queuedWhileSilentThenPlaced(t, 'cq');
  });

  it('never takes a node that keeps reporting offline, and brings a silent one back on its next report', async () => {
    const res = await post(report('c1', [gpuNode('chatty-01'), gpuNode('back-01')]));
    const [chatty, back] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      await post(report('c1', [gpuNode('chatty-01')]));
      await sleep(400);
    }
    expect((await node(chatty)).status).toBe('ready');
    expect((await node(back)).status).toBe('offline');
    const again = await post(report('c1', [gpuNode('back-01')]));
    expect(again.body.nodes[0].status).toBe('ready');
    expect(
      (await events('NodeWentOffline')).filter((e) => e.streamId === `node-${chatty}`),
    ).toHaveLength(0);
  });

  it('counts a report older (by observedAt) than the newest as a sighting: a node whose clock stepped back keeps reporting and stays online', async () => {
    // One report from a clock 50 s fast (within the 60 s allowed), then the clock is put
    // right: every report after it is older than the newest applied, so it changes nothing,
    // but it arrived, and staleness goes by the server's receive time.
    const ahead = new Date(Date.now() + 50_000).toISOString();
    const res = await post(report('c1', [gpuNode('skewed-01', 2, 'L40S', { observedAt: ahead })]));
    const nodeId = res.body.nodes[0].nodeId;
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      const now = new Date().toISOString();
      const next = await post(report('c1', [gpuNode('skewed-01', 4, 'L40S', { observedAt: now })]));
      expect(next.status).toBe(200);
      await sleep(400);
    }
    const seen = await node(nodeId);
    expect(seen.status).toBe('ready');
    expect(seen.gpuCount).toBe(2); // the older reports changed nothing
    expect(
      (await events('NodeWentOffline')).filter((e) => e.streamId === `node-${nodeId}`),
    ).toHaveLength(0);
  });

  it('brings a node offline for silence back on a report older (by observedAt) than the newest', async () => {
    const ahead = new Date(Date.now() + 50_000).toISOString();
    const res = await post(report('c1', [gpuNode('skewed-02', 1, 'L40S', { observedAt: ahead })]));
    const nodeId = res.body.nodes[0].nodeId;
    await eventually(async () => (await node(nodeId)).status === 'offline', 6000);
    // The operator's clock was put right: its reports are older than the newest, but arrive.
    const back = await post(
      report('c1', [gpuNode('skewed-02', 1, 'L40S', { observedAt: new Date().toISOString() })]),
    );
    expect(back.status).toBe(200);
    expect(back.body.nodes[0].status).toBe('ready');
    expect((await node(nodeId)).status).toBe('ready');
  });

  it('keeps a node offline for silence offline once it reports NotReady, even when an older report arrives late', async () => {
    const ago = (sec: number) => new Date(Date.now() - sec * 1000).toISOString();
    const res = await post(report('c1', [gpuNode('late-01', 1, 'L40S', { observedAt: ago(30) })]));
    const nodeId = res.body.nodes[0].nodeId;
    await eventually(async () => (await node(nodeId)).status === 'offline', 6000);
    const notReady = await post(
      report('c1', [gpuNode('late-01', 1, 'L40S', { observedAt: ago(10), kubeletReady: false })]),
    );
    expect(notReady.body.nodes[0].status).toBe('offline');
    expect(await node(nodeId)).toMatchObject({
      status: 'offline',
      offlineReason: 'kubelet_not_ready',
    });
    // Delayed in the operator's queue: older than the NotReady one, NotReady too.
    const late = await post(
      report('c1', [gpuNode('late-01', 1, 'L40S', { observedAt: ago(20), kubeletReady: false })]),
    );
    expect(late.body.nodes[0].status).toBe('offline');
    expect((await node(nodeId)).status).toBe('offline');
    const back = (await events('NodeCameOnline')).filter((e) => e.streamId === `node-${nodeId}`);
    expect(back).toEqual([]);
  });

  it('registers a node whose first report is NotReady as offline without a notification, and notifies when it comes up', async () => {
    const joining = await post(
      report('cj', [gpuNode('joining-01', 1, 'L40S', { kubeletReady: false })]),
    );
    expect(joining.status).toBe(200);
    const nodeId: string = joining.body.nodes[0].nodeId;
    expect(joining.body.nodes[0].status).toBe('offline');
    expect(await node(nodeId)).toMatchObject({
      status: 'offline',
      offlineReason: 'kubelet_not_ready',
    });
    const aboutIt = async () =>
      (await request(t.url).get('/v1/notifications?limit=1000').set(admin)).body.items.filter(
        (n: { nodeId: string | null }) => n.nodeId === nodeId,
      );
    // Joining is no transition (kubelets commonly start NotReady while a node boots).
    await sleep(300);
    expect(await aboutIt()).toEqual([]);
    const up = await post(report('cj', [gpuNode('joining-01', 1, 'L40S')]));
    expect(up.body.nodes[0].status).toBe('ready');
    const [note] = await eventually(async () => {
      const notes = await aboutIt();
      return notes.length > 0 ? notes : null;
    });
    expect(note).toMatchObject({
      type: 'node_status_changed',
      hostname: 'joining-01',
      from: 'offline',
      to: 'ready',
    });
    expect(await aboutIt()).toHaveLength(1);
  });

  it('holds 4 of 5 nodes falling silent together and raises one stalled notification', async () => {
    const hosts = ['m-1', 'm-2', 'm-3', 'm-4', 'm-5'];
    const res = await post(
      report(
        'cm',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    const ids: string[] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const until = Date.now() + 5000;
    while (Date.now() < until) {
      await post(report('cm', [gpuNode('m-5')]));
      await sleep(300);
    }
    for (const id of ids) expect((await node(id)).status).toBe('ready');
    const stalled = (await events('ClusterReportsStalled')).filter(
      (e) => e.data.clusterId === 'cm',
    );
    expect(stalled).toHaveLength(1);
    expect((stalled[0].data.staleNodes as unknown[]).length).toBe(4);
    const notes = await request(t.url).get('/v1/notifications').set(admin);
    expect(
      notes.body.items.filter(
        (n: { type: string; clusterId: string }) =>
          n.type === 'cluster_reports_stalled' && n.clusterId === 'cm',
      ),
    ).toHaveLength(1);
    // Reports return: the stall ends and every clock restarts, so no stampede of offlines follows.
    await post(
      report(
        'cm',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    await eventually(async () =>
      (await events('ClusterReportsResumed')).some((e) => e.data.clusterId === 'cm'),
    );
    await sleep(1000);
    for (const id of ids) expect((await node(id)).status).toBe('ready');
    expect(
      (await events('NodeWentOffline')).filter((e) =>
        ids.some((id) => e.streamId === `node-${id}`),
      ),
    ).toHaveLength(0);
  });

  it('ends a stall on the first report of a held node, even one right after a healthy report', async () => {
    const hosts = ['t-1', 't-2', 't-3', 't-4', 't-5'];
    const registeredAt = Date.now();
    await post(
      report(
        'ct',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    const stalledHere = async () =>
      (await events('ClusterReportsStalled')).some((e) => e.data.clusterId === 'ct');
    const resumedHere = async () =>
      (await events('ClusterReportsResumed')).some((e) => e.data.clusterId === 'ct');
    // t-1..t-4 fall silent together. t-5 reports just before their timeouts fire (2 s), so the
    // cluster was found reporting moments before the guard marks the stall.
    await sleep(registeredAt + 1900 - Date.now());
    await post(report('ct', [gpuNode('t-5')]));
    const until = Date.now() + 8000;
    while (!(await stalledHere())) {
      expect(Date.now()).toBeLessThan(until);
      await sleep(50);
    }
    // One report of the held nodes, nothing after it: it alone must end the stall.
    await post(
      report(
        'ct',
        hosts.slice(0, 4).map((h) => gpuNode(h)),
      ),
    );
    await eventually(resumedHere, 3000);
  });

  it('ends a stall another replica marked within a second of reports, though this one found the cluster reporting', async () => {
    const hosts = ['x-1', 'x-2', 'x-3', 'x-4', 'x-5'];
    const res = await post(
      report(
        'cx',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    const nodes: Array<{ nodeId: string; hostname: string }> = res.body.nodes;
    // Found reporting just now...
    await post(report('cx', [gpuNode('x-5')]));
    // ...then a stall is marked behind this process's back, as another replica marks one.
    await t.app.get(CommandPipeline).handle(
      clusterLivenessAggregate,
      clusterStreamId('cx'),
      {
        type: 'MarkClusterReportsStalled',
        data: {
          clusterId: 'cx',
          staleNodes: nodes.slice(0, 3),
          onlineNodes: 5,
          lastSeenAt: new Date().toISOString(),
          at: new Date().toISOString(),
        },
      },
      systemContext(uuidV7()),
    );
    const resumed = async () =>
      (await events('ClusterReportsResumed')).find((e) => e.data.clusterId === 'cx');
    const markedAt = Date.now();
    while (!(await resumed())) {
      expect(Date.now() - markedAt).toBeLessThan(REPORTING_TRUST_MS + 1500);
      await post(report('cx', [gpuNode('x-1')]));
      await sleep(200);
    }
  });

  it('while a stall holds, takes a node of that cluster that falls silent later offline on its own', async () => {
    const hosts = ['z-1', 'z-2', 'z-3', 'z-4', 'z-5'];
    const res = await post(
      report(
        'cz',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    const ids: string[] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const stalledHere = async () =>
      (await events('ClusterReportsStalled')).some((e) => e.data.clusterId === 'cz');
    // z-1..z-3 fall silent together (3 of 5): held. z-4 and z-5 keep reporting.
    let until = Date.now() + 8000;
    let stoppedAt = 0;
    while (!(await stalledHere())) {
      expect(Date.now()).toBeLessThan(until);
      await post(report('cz', [gpuNode('z-4'), gpuNode('z-5')]));
      stoppedAt = Date.now();
      await sleep(300);
    }
    // Then z-5 stops too, alone, while z-4 reports: its own failure, not the stall's.
    until = stoppedAt + 6000;
    while ((await node(ids[4])).status !== 'offline') {
      expect(Date.now()).toBeLessThan(until);
      await post(report('cz', [gpuNode('z-4')]));
      await sleep(300);
    }
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2000);
    expect((await node(ids[4])).offlineReason).toBe('heartbeat_timeout');
    for (const id of ids.slice(0, 4)) expect((await node(id)).status).toBe('ready');
  });

  it('after a stall ends, times a silent node out from the restart but records its real last report', async () => {
    const hosts = ['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-6', 'r-7', 'r-8'];
    const before = Date.now();
    const res = await post(
      report(
        'cr',
        hosts.map((h) => gpuNode(h)),
      ),
    );
    const after = Date.now();
    const ids: string[] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const ofCluster = async (type: string) =>
      (await events(type)).filter((e) => e.data.clusterId === 'cr');
    const healthy = ['r-6', 'r-7', 'r-8'].map((h) => gpuNode(h));
    // r-1..r-5 fall silent together (5 of 8) while r-6..r-8 keep reporting: the guard holds them.
    let until = Date.now() + 8000;
    while ((await ofCluster('ClusterReportsStalled')).length === 0) {
      if (Date.now() > until) throw new Error('the guard never held cluster cr');
      await post(report('cr', healthy));
      await sleep(300);
    }
    // r-1..r-3 come back: the stall ends, and r-4 and r-5 (2 of 8, no mass failure) get a
    // full window from then.
    const back = [...['r-1', 'r-2', 'r-3'].map((h) => gpuNode(h)), ...healthy];
    await post(report('cr', back));
    const resumed = await eventually(async () => (await ofCluster('ClusterReportsResumed'))[0]);
    const offlineOf = async (id: string) =>
      (await events('NodeWentOffline')).find((e) => e.streamId === `node-${id}`);
    until = Date.now() + 10_000;
    while (!(await offlineOf(ids[3]))) {
      if (Date.now() > until) throw new Error('r-4 never went offline after the stall');
      await post(report('cr', back));
      await sleep(300);
    }
    const offline = (await offlineOf(ids[3]))!;
    expect(offline.data.reason).toBe('heartbeat_timeout');
    // Timed from the restart...
    const resumedAt = Date.parse(resumed.data.at as string);
    expect(Date.parse(offline.data.at as string)).toBeGreaterThanOrEqual(resumedAt + 2000);
    // ...but its last sighting is its real last report, where its sessions' bills end.
    const lastSeenAt = Date.parse(offline.data.lastSeenAt as string);
    expect(lastSeenAt).toBeGreaterThanOrEqual(before);
    expect(lastSeenAt).toBeLessThanOrEqual(after);
    for (const i of [0, 1, 2, 5, 6, 7]) expect(await offlineOf(ids[i])).toBeUndefined();
  });

  it("raises a second stall after a release with the nodes' real last report, not the release time", async () => {
    const before = Date.now();
    await post(
      report(
        'cs',
        ['s-1', 's-2', 's-3', 's-4', 's-5'].map((h) => gpuNode(h)),
      ),
    );
    const after = Date.now();
    const stalls = async () =>
      (await events('ClusterReportsStalled')).filter((e) => e.data.clusterId === 'cs');
    const keepReporting = async (hosts: string[], until: () => Promise<boolean>) => {
      const deadline = Date.now() + 12_000;
      while (!(await until())) {
        if (Date.now() > deadline) throw new Error('cluster cs never got there');
        await post(
          report(
            'cs',
            hosts.map((h) => gpuNode(h)),
          ),
        );
        await sleep(300);
      }
    };
    // s-1..s-4 fall silent: held. s-1 comes back: released. s-2..s-4 (3 of 5) are still
    // silent, a mass failure again: held a second time.
    await keepReporting(['s-5'], async () => (await stalls()).length === 1);
    await keepReporting(['s-1', 's-5'], async () => (await stalls()).length === 2);
    const resumed = (await events('ClusterReportsResumed')).find((e) => e.data.clusterId === 'cs')!;
    const second = (await stalls())[1];
    expect((second.data.staleNodes as unknown[]).length).toBe(3);
    const lastSeenAt = Date.parse(second.data.lastSeenAt as string);
    expect(lastSeenAt).toBeGreaterThanOrEqual(before);
    expect(lastSeenAt).toBeLessThanOrEqual(after);
    expect(lastSeenAt).toBeLessThan(Date.parse(resumed.data.at as string));
  });

  it('takes held nodes offline at their real last report once an admin confirms the outage', async () => {
    const hosts = ['o-1', 'o-2', 'o-3', 'o-4', 'o-5'];
    const nodes = hosts.map((h) => (h === 'o-1' ? gpuNode(h, 1, 'MIG_3g') : gpuNode(h)));
    const res = await post(report('co', nodes));
    const ids: string[] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const user = await t.auth('u-outage', ['user']);
    const session = await request(t.url)
      .post('/v1/sessions')
      .set(user)
      .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
    expect(session.body).toMatchObject({ status: 'running', nodeId: ids[0] });
    // Their last reports, after the session started: its bill runs until here.
    const before = Date.now();
    await post(report('co', nodes));
    const after = Date.now();
    const sessionId: string = session.body.sessionId;
    const cluster = async () => (await request(t.url).get('/v1/clusters/co').set(admin)).body;
    const confirm = (auth: Record<string, string>, body: object = {}, clusterId = 'co') =>
      request(t.url).post(`/v1/clusters/${clusterId}/confirm-outage`).set(auth).send(body);

    // Nothing held yet: nothing to confirm.
    const early = await request(t.url).post('/v1/clusters/co/confirm-outage').set(admin);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('cluster_not_stalled');
    // o-1..o-4 fall silent together while o-5 reports: the guard holds them.
    const deadline = Date.now() + 8000;
    while ((await cluster()).reports.status !== 'stalled') {
      if (Date.now() > deadline) throw new Error('the guard never held cluster co');
      await post(report('co', [nodes[4]]));
      await sleep(300);
    }
    const held = (await cluster()).reports;
    expect(held.heldNodes.map((n: { hostname: string }) => n.hostname).sort()).toEqual(
      hosts.slice(0, 4),
    );
    expect((await request(t.url).get(`/v1/sessions/${sessionId}`).set(user)).body.status).toBe(
      'running',
    );

    // Only an admin confirms; a bad body or an unknown cluster changes nothing.
    const heldSince = held.stalledSince;
    expect((await confirm(operator)).status).toBe(403);
    expect((await confirm(user)).status).toBe(403);
    const bad = await confirm(admin, { reason: 'x', force: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect((await confirm(admin, {}, 'no-such-cluster')).status).toBe(404);
    expect((await cluster()).reports).toMatchObject({ status: 'stalled', stalledSince: heldSince });

    const confirmedAt = Date.now();
    const confirmed = await confirm(admin, { reason: 'rack power lost' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.reports).toMatchObject({ status: 'reporting', heldNodes: [] });
    const offlineOf = async (id: string) =>
      (await events('NodeWentOffline')).find((e) => e.streamId === `node-${id}`);
    // Offline at once (not a window later), timed out at their real last report.
    const offline: Ev[] = await eventually(async () => {
      await post(report('co', [nodes[4]]));
      const found = await Promise.all(ids.slice(0, 4).map(offlineOf));
      return found.every(Boolean) ? (found as Ev[]) : null;
    }, 5000);
    for (const e of offline) {
      expect(e.data.reason).toBe('heartbeat_timeout');
      const lastSeenAt = Date.parse(e.data.lastSeenAt as string);
      expect(lastSeenAt).toBeGreaterThanOrEqual(before);
      expect(lastSeenAt).toBeLessThanOrEqual(after);
      expect(Date.parse(e.data.at as string) - confirmedAt).toBeLessThan(1500);
    }
    // The offlines the confirmation set off join its request's chain, caused by its event.
    const confirmation = (await events('ClusterOutageConfirmed')).find(
      (e) => e.streamId === 'cluster-co',
    )!;
    for (const e of offline) {
      expect(e.metadata).toMatchObject({
        correlationId: confirmed.headers['x-correlation-id'],
        causationId: confirmation.eventId,
      });
    }
    // The session ends with its node and is billed to the node's last report, not to now.
    const ended = await eventually(async () => {
      const s = (await request(t.url).get(`/v1/sessions/${sessionId}`).set(user)).body;
      return s.status === 'terminated' ? s : null;
    });
    expect(ended.terminationReason).toBe('node_offline');
    const bill = await eventually(async () => {
      const page = (
        await request(t.url).get(`/v1/billing/records?sessionId=${sessionId}`).set(user)
      ).body;
      return page.items.length === 1 ? page.items[0] : null;
    });
    expect(bill.to).toBe(offline[0].data.lastSeenAt);
    // o-5 kept reporting: still ready, and the confirmed silence is not held a second time.
    await sleep(1000);
    expect((await node(ids[4])).status).toBe('ready');
    expect(
      (await events('ClusterReportsStalled')).filter((e) => e.data.clusterId === 'co'),
    ).toHaveLength(1);
    const again = await confirm(admin);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('cluster_not_stalled');
  });
});

describe('the report fast path', () => {
  // Its own app with a long stale window: no job fires and no reconcile runs while Redis is watched.
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
  });
  afterAll(async () => t.close());

  it('counts every node of an unchanged report as one no-op command in /metrics', async () => {
    const operator = await t.auth('op', ['operator'], ['c1']);
    const nodes = [gpuNode('counted-01'), gpuNode('counted-02'), gpuNode('counted-03')];
    const post = () =>
      request(t.url).post('/v1/inventory/reports').set(operator).send(report('c1', nodes));
    await post();
    const noops = async (): Promise<[number, number]> => {
      const text = (await request(t.url).get('/metrics')).text;
      const read = (line: string): number =>
        Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return [
        read('fleet_commands_total{command="ReportNode",aggregate="node",result="noop"}'),
        read('fleet_command_duration_seconds_count{command="ReportNode",result="noop"}'),
      ];
    };
    const [commands, observed] = await noops();
    await post();
    await post();
    expect(await noops()).toEqual([commands + 6, observed + 6]);
  });

  it('reconciles a fleet whose timers are all armed without reading its nodes', async () => {
    const operator = await t.auth('op', ['operator'], ['c1']);
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('c1', [gpuNode('armed-01'), gpuNode('armed-02')]));
    const liveness = t.app.get(LivenessSaga);
    const store = t.app.get<ReadModelStore>(READ_MODELS);
    // Until the reactor has armed both, a reconcile may still find one to arm.
    await eventually(async () => (await liveness.reconcile()) === 0);
    const find = jest.spyOn(store, 'find');
    try {
      expect(await liveness.reconcile()).toBe(0);
      // At 100,000 nodes reading every online node took ~20 s of CPU on each period. (Other
      // collections may be read meanwhile: the queue ticker's safety net runs on its own.)
      expect(find.mock.calls.filter(([collection]) => collection === 'nodes')).toEqual([]);
    } finally {
      find.mockRestore();
    }
  });

  it('writes nothing to the job queue and appends nothing for an unchanged report', async () => {
    const admin = await t.auth('root', ['admin']);
    const operator = await t.auth('op', ['operator'], ['c1']);
    const post = (body: object) =>
      request(t.url).post('/v1/inventory/reports').set(operator).send(body);
    await post(report('c1', [gpuNode('steady-01')]));
    const prefix = t.config.redisPrefix;
    const redis = new Redis(REDIS_URL);
    // The registration armed the node's offline timer (through the reactor): wait for it.
    await eventually(async () => (await redis.keys(`${prefix}:node-offline-timeout:*`)).length > 0);
    redis.disconnect();
    // MONITOR over a raw socket: every command Redis executes, from every client, while we watch.
    const url = new URL(REDIS_URL);
    const socket = net.connect(Number(url.port || 6379), url.hostname);
    let seen = '';
    socket.on('data', (chunk) => (seen += chunk.toString()));
    socket.write('MONITOR\r\n');
    await eventually(async () => seen.includes('+OK'));
    const head = (await request(t.url).get('/v1/events?limit=1000').set(admin)).body.events.length;
    await post(report('c1', [gpuNode('steady-01')]));
    await sleep(100);
    socket.destroy();
    const commands = seen.split('\r\n').filter((line) => /^\+\d+\.\d+ /.test(line));
    expect(commands.filter((c) => c.includes(`${prefix}:node-offline-timeout`))).toEqual([]);
    expect(commands.some((c) => c.includes(`${prefix}:heartbeats`))).toBe(true);
    expect((await request(t.url).get('/v1/events?limit=1000').set(admin)).body.events.length).toBe(
      head,
    );
  });
});
