import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import Redis from 'ioredis';
import { startApp, TestApp } from '../support/app';
import { runningCluster } from '../support/clusters';
import { eventually, gpuNode, report, sleep } from '../support/reports';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '@fleet/cqrs';
import { systemContext } from '@fleet/kernel';
import { nodeAggregate } from '../../apps/control-plane/src/nodes/node.aggregate';
import { nodeStreamId } from '../../apps/control-plane/src/nodes/node.events';
import { SimulatedProvisioner } from '../../apps/control-plane/src/provisioner/simulated-provisioner';
import { DRAINS, DrainDoc } from '../../apps/control-plane/src/drains/drains.projection';
import { READ_MODELS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { ReadModelStore } from '@fleet/readmodels/port';
import {
  PROVISIONER,
  Provisioner,
} from '../../apps/control-plane/src/provisioner/provisioner.port';

type Operation = {
  operationId: string;
  type: string;
  status: string;
  steps: Array<{ name: string; status: string; at: string }>;
  error: string | null;
  nodes: Array<{ nodeId: string; hostname: string }>;
};
type Node = { nodeId: string; hostname: string; poolId: string | null; runningSessions: number };

const CLUSTER = {
  name: 'ops',
  k8sVersion: '1.30.4',
  podCidr: '10.244.0.0/16',
  serviceCidr: '10.96.0.0/12',
};

const helpers = (t: TestApp, admin: Record<string, string>) => ({
  // Pools change only in a running cluster: walked there as its provisioner would report it.
  // The admin creating it is its owner; alice, who runs the sessions, an editor (a pool of a
  // cluster with members is open to its owners and editors).
  createCluster: async (): Promise<string> => {
    const clusterId = await runningCluster(t.url, admin, CLUSTER);
    await request(t.url)
      .put(`/v1/clusters/${clusterId}/members/alice`)
      .set(admin)
      .send({ role: 'editor' })
      .expect(200);
    return clusterId;
  },
  createPool: async (clusterId: string, body: object) =>
    (
      await request(t.url)
        .post(`/v1/clusters/${clusterId}/node-pools`)
        .set(admin)
        .send(body)
        .expect(201)
    ).body,
  scale: (poolId: string, desiredSize: number) =>
    request(t.url).post(`/v1/node-pools/${poolId}/scale`).set(admin).send({ desiredSize }),
  operation: async (id: string): Promise<Operation> =>
    (await request(t.url).get(`/v1/operations/${id}`).set(admin)).body,
  finished: async (id: string, ms = 20_000): Promise<Operation> =>
    (await eventually<Operation | null>(async () => {
      const op = (await request(t.url).get(`/v1/operations/${id}`).set(admin)).body as Operation;
      return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
    }, ms)) as Operation,
  nodesOf: async (poolId: string): Promise<Node[]> =>
    (await request(t.url).get(`/v1/nodes?poolId=${poolId}`).set(admin)).body.items,
});

describe('operations with the simulated provisioner', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let h: ReturnType<typeof helpers>;
  beforeAll(async () => {
    t = await startApp({ OPERATION_DEADLINE_SEC: '60' });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
    h = helpers(t, admin);
  });
  afterAll(async () => t.close());

  /**
   * Scales `poolId` to `size`; the moment the operation first sees one of its drains completed,
   * before it asks for the removal (a window testers hit by timing), `act` runs on that drain's
   * node. Answers the finished operation and that node.
   */
  const scaleActingAfterDrain = async (
    poolId: string,
    size: number,
    act: (nodeId: string) => Promise<unknown>,
  ): Promise<{ op: Operation; nodeId: string | null }> => {
    const readModels = t.app.get<ReadModelStore>(READ_MODELS);
    const get = readModels.get.bind(readModels);
    let nodeId: string | null = null;
    const spy = jest.spyOn(readModels, 'get').mockImplementation(async (collection, id) => {
      const doc = await get(collection, id);
      const drain = doc as (DrainDoc & { nodeId: string }) | null;
      if (collection === DRAINS && drain?.status === 'completed' && nodeId === null) {
        nodeId = drain.nodeId;
        await act(nodeId);
      }
      return doc as never;
    });
    try {
      const op = await h.finished((await h.scale(poolId, size)).body.operationId);
      return { op, nodeId };
    } finally {
      spy.mockRestore();
    }
  };

  it('scales a pool 2 → 5 → 3: nodes register, the scale-in drain moves sessions, billing stays intact', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'l40s',
      kind: 'gpu',
      gpuType: 'L40S',
      gpusPerNode: 2,
      // min 0: with a min of 1 the autoscaler would raise the empty pool to it at once.
      autoscaling: { min: 0, max: 6 },
    });
    const first = await h.scale(pool.poolId, 2);
    expect(first.status).toBe(202);
    expect(await h.finished(first.body.operationId)).toMatchObject({ status: 'succeeded' });
    expect(await h.nodesOf(pool.poolId)).toHaveLength(2);

    const out = await h.scale(pool.poolId, 5);
    expect(out.status).toBe(202);
    const grown = await h.finished(out.body.operationId);
    expect(grown).toMatchObject({ type: 'scale_node_pool', status: 'succeeded', error: null });
    expect(grown.steps.map((s) => [s.name, s.status])).toEqual([
      ['request_nodes', 'succeeded'],
      ['await_registration', 'succeeded'],
    ]);
    const five = await h.nodesOf(pool.poolId);
    expect(five).toHaveLength(5);
    const node = (await request(t.url).get(`/v1/nodes/${five[0].nodeId}`).set(admin)).body;
    expect(node).toMatchObject({
      clusterId,
      role: 'gpu',
      status: 'ready',
      gpuCount: 2,
      capacity: { cpu: 16, memoryGiB: 64 },
    });

    // One session on every node (cordoning each node once it holds one), so scale-in must move some.
    const sessions: Array<{ sessionId: string; nodeId: string }> = [];
    for (let i = 0; i < 5; i++) {
      const s = (
        await request(t.url)
          .post('/v1/sessions')
          .set(alice)
          .send({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, poolId: pool.poolId })
      ).body;
      expect(s.status).toBe('running');
      sessions.push(s);
      await request(t.url).post(`/v1/nodes/${s.nodeId}/cordon`).set(admin).send({}).expect(200);
    }
    expect(new Set(sessions.map((s) => s.nodeId)).size).toBe(5);
    for (const s of sessions) {
      await request(t.url).post(`/v1/nodes/${s.nodeId}/uncordon`).set(admin).expect(200);
    }

    const inward = await h.scale(pool.poolId, 3);
    expect(inward.status).toBe(202);
    const second = await h.scale(pool.poolId, 4);
    expect([second.status, second.body.error.code]).toEqual([409, 'operation_in_progress']);
    // A resize to the shape the pool already has is refused for the operation first.
    const sameShape = await request(t.url)
      .post(`/v1/node-pools/${pool.poolId}/resize`)
      .set(admin)
      .send({ cpu: pool.spec.cpu });
    expect([sameShape.status, sameShape.body.error.code]).toEqual([409, 'operation_in_progress']);
    const shrunk = await h.finished(inward.body.operationId);
    expect(shrunk).toMatchObject({ status: 'succeeded', error: null });
    expect(shrunk.steps.map((s) => [s.name, s.status])).toEqual([
      ['choose_nodes', 'succeeded'],
      ['drain_nodes', 'succeeded'],
      ['remove_nodes', 'succeeded'],
    ]);
    const removed = new Set(shrunk.nodes.map((n) => n.nodeId));
    expect(removed.size).toBe(2);
    const three = await h.nodesOf(pool.poolId);
    expect(three).toHaveLength(3);
    for (const n of removed) {
      expect((await request(t.url).get(`/v1/nodes/${n}`).set(admin)).status).toBe(404);
    }
    const moved = sessions.filter((s) => removed.has(s.nodeId));
    expect(moved).toHaveLength(2);
    for (const s of moved) {
      const now = (await request(t.url).get(`/v1/sessions/${s.sessionId}`).set(alice)).body;
      expect(now.status).toBe('running');
      expect(removed.has(now.nodeId)).toBe(false);
      const records = await eventually(async () => {
        const res = await request(t.url)
          .get(`/v1/billing/records?sessionId=${s.sessionId}`)
          .set(admin);
        return res.body.items?.length === 1 ? res.body.items : null;
      });
      expect(records[0]).toMatchObject({ sessionId: s.sessionId, nodeId: s.nodeId });
      const verify = await request(t.url)
        .get(`/v1/billing/sessions/${s.sessionId}/verify`)
        .set(admin);
      expect(verify.body.ok).toBe(true);
    }
    const stayed = sessions.filter((s) => !removed.has(s.nodeId));
    for (const s of stayed) {
      const now = (await request(t.url).get(`/v1/sessions/${s.sessionId}`).set(alice)).body;
      expect(now).toMatchObject({ status: 'running', nodeId: s.nodeId });
    }
    expect(
      (await request(t.url).get(`/v1/node-pools/${pool.poolId}`).set(admin)).body,
    ).toMatchObject({
      size: 3,
      operation: null,
    });
  });

  it('removes no node an admin uncordoned after its drain: the scale-in fails naming it, the node stays', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'taken-back',
      kind: 'gpu',
      gpuType: 'L40S',
      gpusPerNode: 1,
    });
    expect(await h.finished((await h.scale(pool.poolId, 2)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    // Queued sessions may land on a node taken back, and removing it would end them.
    const { op, nodeId: takenBack } = await scaleActingAfterDrain(pool.poolId, 1, (nodeId) =>
      request(t.url).post(`/v1/nodes/${nodeId}/uncordon`).set(admin).expect(200),
    );
    expect(takenBack).not.toBeNull();
    expect(op.status).toBe('failed');
    expect(op.error).toMatch(/^node_in_use: node \S+ was uncordoned since its drain: not removed$/);
    expect(op.steps.map((s) => [s.name, s.status])).toEqual(
      expect.arrayContaining([['drain_nodes', 'succeeded']]),
    );
    // Nothing removed: both nodes are still in the pool, the one taken back ready for work.
    const nodes = await h.nodesOf(pool.poolId);
    expect(nodes.map((n) => n.nodeId)).toContain(takenBack);
    expect(nodes).toHaveLength(2);
    const node = (await request(t.url).get(`/v1/nodes/${takenBack}`).set(admin)).body;
    expect(node.status).toBe('ready');
    // And a later scale-in, left alone, goes through.
    const again = await h.finished((await h.scale(pool.poolId, 1)).body.operationId);
    expect(again).toMatchObject({ status: 'succeeded', error: null });
    expect(await h.nodesOf(pool.poolId)).toHaveLength(1);
  });

  it('removes no node an admin moved to another pool after its drain: the scale-in fails naming it', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'moved-late', kind: 'cpu' });
    const other = await h.createPool(clusterId, { name: 'moved-late-to', kind: 'cpu' });
    expect(await h.finished((await h.scale(pool.poolId, 2)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const { op, nodeId: moved } = await scaleActingAfterDrain(pool.poolId, 1, (nodeId) =>
      request(t.url)
        .put(`/v1/nodes/${nodeId}/pool`)
        .set(admin)
        .send({ poolId: other.poolId })
        .expect(200),
    );
    expect(moved).not.toBeNull();
    expect(op.status).toBe('failed');
    expect(op.error).toMatch(
      /^node_in_use: node \S+ was moved to another pool since it was chosen: not removed$/,
    );
    // The node is where the admin put it, not deleted; the pool keeps its other node.
    expect((await h.nodesOf(other.poolId)).map((n) => n.nodeId)).toEqual([moved]);
    expect(await h.nodesOf(pool.poolId)).toHaveLength(1);
  });

  it('drains no node an admin moved to another pool once chosen: the scale-in fails naming it', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'moved-early', kind: 'cpu' });
    const other = await h.createPool(clusterId, { name: 'moved-early-to', kind: 'cpu' });
    expect(await h.finished((await h.scale(pool.poolId, 2)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const pipeline = t.app.get(CommandPipeline);
    const handle = pipeline.handle.bind(pipeline);
    let movedAll = false;
    // The operation has recorded the nodes it chose; then the admin moves them, before the drain.
    const spy = jest.spyOn(pipeline, 'handle').mockImplementation(async (...args) => {
      const result = await handle(...args);
      const command = args[2] as { type: string; data: { nodes?: Array<{ nodeId: string }> } };
      if (command.type === 'ChooseOperationNodes' && !movedAll) {
        movedAll = true;
        for (const node of command.data.nodes ?? []) {
          await request(t.url)
            .put(`/v1/nodes/${node.nodeId}/pool`)
            .set(admin)
            .send({ poolId: other.poolId })
            .expect(200);
        }
      }
      return result;
    });
    let op: Operation;
    try {
      op = await h.finished((await h.scale(pool.poolId, 1)).body.operationId);
    } finally {
      spy.mockRestore();
    }
    expect(movedAll).toBe(true);
    expect(op.status).toBe('failed');
    expect(op.error).toMatch(
      /^node_in_use: node \S+ was moved to another pool since it was chosen: not drained$/,
    );
    const there = await h.nodesOf(other.poolId);
    expect(there).toHaveLength(1);
    expect(await h.nodesOf(pool.poolId)).toHaveLength(1);
    for (const node of there) {
      expect((await request(t.url).get(`/v1/nodes/${node.nodeId}`).set(admin)).body.status).toBe(
        'ready',
      );
    }
  });

  it('does the work of a scale-in in the correlation of the request that asked for it', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'followed', kind: 'cpu' });
    expect(await h.finished((await h.scale(pool.poolId, 1)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const correlationId = `scale-in-${randomUUID()}`;
    const asked = await request(t.url)
      .post(`/v1/node-pools/${pool.poolId}/scale`)
      .set(admin)
      .set('x-correlation-id', correlationId)
      .send({ desiredSize: 0 });
    const op = await h.finished(asked.body.operationId);
    expect(op.status).toBe('succeeded');
    const [node] = op.nodes;
    const types = async (streamId: string): Promise<Array<readonly [string, boolean]>> =>
      (await request(t.url).get(`/v1/streams/${streamId}`).set(admin)).body.events.map(
        (e: { type: string; metadata: { correlationId: string } }) =>
          [e.type.replace(/\.v\d+$/, ''), e.metadata.correlationId === correlationId] as const,
      );
    const opEvents = await types(`operation-${op.operationId}`);
    expect(opEvents.length).toBeGreaterThan(4);
    expect(opEvents.filter(([, ours]) => !ours)).toEqual([]);
    const nodeEvents = await types(`node-${node.nodeId}`);
    for (const type of ['NodeCordoned', 'NodeRemovalRequested', 'NodeDeleted']) {
      expect(nodeEvents).toContainEqual([type, true]);
    }
  });

  it('refuses an uncordon of a node on its way out (node_being_removed); the scale-in goes through', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'on-its-way', kind: 'cpu' });
    expect(await h.finished((await h.scale(pool.poolId, 2)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const provisioner = t.app.get<Provisioner>(PROVISIONER);
    const remove = provisioner.removeNodes.bind(provisioner);
    const tried: Array<{ status: number; code?: string }> = [];
    // The provisioner has been asked; before it takes the node down, an admin uncordons it.
    const spy = jest.spyOn(provisioner, 'removeNodes').mockImplementation(async (req) => {
      for (const node of req.nodes) {
        const res = await request(t.url).post(`/v1/nodes/${node.nodeId}/uncordon`).set(admin);
        tried.push({ status: res.status, code: res.body.error?.code });
      }
      return remove(req);
    });
    let op: Operation;
    try {
      op = await h.finished((await h.scale(pool.poolId, 1)).body.operationId);
    } finally {
      spy.mockRestore();
    }
    expect(tried).toEqual([{ status: 409, code: 'node_being_removed' }]);
    expect(op).toMatchObject({ status: 'succeeded', error: null });
    expect(await h.nodesOf(pool.poolId)).toHaveLength(1);
  });

  it('brings a simulated node that timed out back on its next heartbeat', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'cpu-beat', kind: 'cpu' });
    const op = await h.scale(pool.poolId, 1);
    expect(await h.finished(op.body.operationId)).toMatchObject({ status: 'succeeded' });
    const [node] = await h.nodesOf(pool.poolId);
    // Timed out as the liveness saga does when heartbeats are lost (a restart, Redis emptied).
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await t.app.get(CommandPipeline).handle(
      nodeAggregate,
      nodeStreamId(node.nodeId),
      {
        type: 'TimeOutNodeHeartbeat',
        data: { lastSeenAt: new Date().toISOString(), staleSec: 1, at },
      },
      systemContext(randomUUID()),
    );
    const status = async () =>
      (await request(t.url).get(`/v1/nodes/${node.nodeId}`).set(admin)).body.status;
    await eventually(async () => (await status()) === 'offline');
    await t.app.get(SimulatedProvisioner).beat();
    await eventually(async () => (await status()) !== 'offline');
  });

  it('refuses sizes outside autoscaling min/max with 409 size_out_of_range', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'mig',
      kind: 'gpu',
      gpuType: 'MIG_1g',
      autoscaling: { min: 1, max: 3 },
    });
    const res = await h.scale(pool.poolId, 4);
    expect([res.status, res.body.error.code]).toEqual([409, 'size_out_of_range']);
    expect((await h.scale(pool.poolId, -1)).status).toBe(400);
    expect((await h.scale('00000000-0000-5000-8000-000000000000', 1)).status).toBe(404);
    // Nothing asked for 4 (the autoscaler raises the empty pool to its min of 1 meanwhile).
    const ops = (await request(t.url).get(`/v1/operations?poolId=${pool.poolId}`).set(admin)).body
      .items as Array<{ desiredSize: number }>;
    expect(ops.filter((o) => o.desiredSize === 4)).toEqual([]);
  });

  it('refuses to delete the last pool; deletes another by draining and removing its nodes', async () => {
    const clusterId = await h.createCluster();
    const keep = await h.createPool(clusterId, { name: 'keep', kind: 'cpu' });
    const last = await request(t.url).delete(`/v1/node-pools/${keep.poolId}`).set(admin);
    expect([last.status, last.body.error.code]).toEqual([409, 'last_pool']);
    const gone = await h.createPool(clusterId, { name: 'gone', kind: 'cpu' });
    const scaled = await h.finished((await h.scale(gone.poolId, 2)).body.operationId);
    expect(scaled.status).toBe('succeeded');
    const res = await request(t.url).delete(`/v1/node-pools/${gone.poolId}`).set(admin);
    expect(res.status).toBe(202);
    const op = await h.finished(res.body.operationId);
    expect(op).toMatchObject({ type: 'delete_node_pool', status: 'succeeded' });
    expect(op.steps.map((s) => s.name)).toEqual([
      'choose_nodes',
      'drain_nodes',
      'remove_nodes',
      'delete_pool',
    ]);
    expect(await h.nodesOf(gone.poolId)).toHaveLength(0);
    const pool = (await request(t.url).get(`/v1/node-pools/${gone.poolId}`).set(admin)).body;
    expect(pool.status).toBe('deleted');
    const cluster = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
    expect(cluster.pools.map((p: { poolId: string }) => p.poolId)).toEqual([keep.poolId]);
    const again = await request(t.url).delete(`/v1/node-pools/${keep.poolId}`).set(admin);
    expect(again.body.error.code).toBe('last_pool');
  });

  it('keeps a pool off its cluster once a second delete of it is refused, so the last pool stays', async () => {
    for (const together of [true, false]) {
      const clusterId = await h.createCluster();
      const keep = await h.createPool(clusterId, { name: 'keep', kind: 'cpu' });
      const work = await h.createPool(clusterId, { name: 'work', kind: 'cpu' });
      expect((await h.finished((await h.scale(work.poolId, 1)).body.operationId)).status).toBe(
        'succeeded',
      );
      const del = () => request(t.url).delete(`/v1/node-pools/${work.poolId}`).set(admin);
      const answers = together ? await Promise.all([del(), del()]) : [await del(), await del()]; // the second while the first deletion runs
      expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
      const refused = answers.find((a) => a.status === 409)!;
      expect(refused.body.error.code).toBe('operation_in_progress');
      const accepted = answers.find((a) => a.status === 202)!;
      expect((await h.finished(accepted.body.operationId)).status).toBe('succeeded');
      const cluster = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
      expect(cluster.pools.map((p: { poolId: string }) => p.poolId)).toEqual([keep.poolId]);
      const last = await request(t.url).delete(`/v1/node-pools/${keep.poolId}`).set(admin);
      expect([last.status, last.body.error?.code]).toEqual([409, 'last_pool']);
    }
  });

  it('raises pool_emptied when a dedicated GPU pool loses its last card', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'ded',
      kind: 'gpu',
      gpuType: 'MIG_2g',
      mode: 'dedicated',
    });
    expect((await h.finished((await h.scale(pool.poolId, 1)).body.operationId)).status).toBe(
      'succeeded',
    );
    expect((await h.finished((await h.scale(pool.poolId, 0)).body.operationId)).status).toBe(
      'succeeded',
    );
    const note = await eventually(async () => {
      const res = await request(t.url).get('/v1/notifications').set(admin);
      return res.body.items.find(
        (n: { type: string; clusterId: string }) =>
          n.type === 'pool_emptied' && n.clusterId === clusterId,
      );
    });
    expect(note.reason).toContain(pool.poolId);
  });
});

/** A provisioner that accepts every request (202) and never delivers a node. */
const neverDelivering = async (
  onRequest: (methodAndPath: string) => void = () => undefined,
): Promise<{ server: http.Server; url: string }> => {
  const server = http.createServer((req, res) => {
    onRequest(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(202).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

describe('operations with a provisioner that never delivers', () => {
  let t: TestApp;
  let server: http.Server;
  let url: string;
  const asked: string[] = [];
  beforeAll(async () => {
    ({ server, url } = await neverDelivering((request) => asked.push(request)));
    t = await startApp({ OPERATION_DEADLINE_SEC: '2', PROVISIONER_URL: url });
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('ends the scale-out in timeout at its deadline, and frees the pool', async () => {
    const admin = await t.auth('root', ['admin']);
    const h = helpers(t, admin);
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'never', kind: 'gpu', gpuType: 'L40S' });
    const res = await h.scale(pool.poolId, 2);
    expect(res.status).toBe(202);
    const op = await h.finished(res.body.operationId, 10_000);
    expect(op.status).toBe('timeout');
    expect(op.error).toContain('await_registration');
    expect(op.steps).toEqual([
      expect.objectContaining({ name: 'request_nodes', status: 'succeeded' }),
      expect.objectContaining({ name: 'await_registration', status: 'failed' }),
    ]);
    expect(asked).toContain('POST /v1/node-requests/create');
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/node-pools/${pool.poolId}`).set(admin)).body.operation ===
        null,
    );
  });
});

describe('scale-in with a provisioner whose removed nodes fall silent (NODE_STALE_SEC=2)', () => {
  let t: TestApp;
  let server: http.Server;
  let admin: Record<string, string>;
  let h: ReturnType<typeof helpers>;
  const asked: string[] = [];
  const removalsAsked = () => asked.filter((r) => r === 'POST /v1/node-requests/remove').length;
  beforeAll(async () => {
    let url: string;
    ({ server, url } = await neverDelivering((request) => asked.push(request)));
    t = await startApp({ NODE_STALE_SEC: '2', OPERATION_DEADLINE_SEC: '20', PROVISIONER_URL: url });
    admin = await t.auth('root', ['admin']);
    h = helpers(t, admin);
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** The operator reports the hosts `up()` names every 300 ms (the others are silent) until stopped. */
  const reporting = async (clusterId: string, up: () => string[]) => {
    const operator = await t.auth('op', ['operator'], [clusterId]);
    const send = () =>
      request(t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(
          report(
            clusterId,
            up().map((host) => gpuNode(host)),
          ),
        )
        .expect(200);
    const ids = new Map<string, string>(
      (await send()).body.nodes.map((n: Node) => [n.hostname, n.nodeId]),
    );
    let running = true;
    const loop = (async () => {
      while (running) {
        await sleep(300);
        await send();
      }
    })();
    return {
      ids,
      stop: async () => {
        running = false;
        await loop;
      },
    };
  };

  const gpuPool = (clusterId: string, name: string) =>
    h.createPool(clusterId, { name, kind: 'gpu', gpuType: 'L40S' });
  const assign = (nodeId: string, poolId: string) =>
    request(t.url).put(`/v1/nodes/${nodeId}/pool`).set(admin).send({ poolId });

  it('scales most of a cluster away: the removed nodes go offline and are deleted, and the guard stays quiet', async () => {
    const clusterId = 'scale-in-silent';
    const pooled = ['p-1', 'p-2', 'p-3', 'p-4'];
    let silent = new Set<string>();
    const operator = await reporting(clusterId, () =>
      ['k-1', ...pooled].filter((host) => !silent.has(host)),
    );
    try {
      const pool = await gpuPool(clusterId, 'p1');
      await gpuPool(clusterId, 'p2');
      for (const host of pooled) {
        await assign(operator.ids.get(host)!, pool.poolId).expect(200);
      }
      const before = removalsAsked();
      const res = await h.scale(pool.poolId, 0);
      expect(res.status).toBe(202);
      // The provisioner takes the VMs down once asked: their reports simply stop.
      await eventually(async () => removalsAsked() > before);
      silent = new Set(pooled);
      const op = await h.finished(res.body.operationId, 30_000);
      expect(op).toMatchObject({ status: 'succeeded', error: null });
      expect(await h.nodesOf(pool.poolId)).toEqual([]);
      await sleep(500);
      const cluster = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
      expect(cluster.reports).toMatchObject({ status: 'reporting', heldNodes: [] });
      const notes = (await request(t.url).get('/v1/notifications?limit=1000').set(admin)).body
        .items as Array<{ type: string; clusterId: string }>;
      expect(
        notes.filter((n) => n.type === 'cluster_reports_stalled' && n.clusterId === clusterId),
      ).toEqual([]);
    } finally {
      await operator.stop();
    }
  });

  it('refuses to move a node on its way out to another pool (node_being_removed); the scale-in goes through', async () => {
    const clusterId = 'scale-in-move';
    let silent = new Set<string>();
    const operator = await reporting(clusterId, () =>
      ['a-1', 'a-2', 'b-1'].filter((host) => !silent.has(host)),
    );
    try {
      const poolA = await gpuPool(clusterId, 'pool-a');
      const poolB = await gpuPool(clusterId, 'pool-b');
      await assign(operator.ids.get('a-1')!, poolA.poolId).expect(200);
      await assign(operator.ids.get('a-2')!, poolA.poolId).expect(200);
      await assign(operator.ids.get('b-1')!, poolB.poolId).expect(200);
      const before = removalsAsked();
      const res = await h.scale(poolA.poolId, 1);
      expect(res.status).toBe(202);
      // Asked: the node is marked for removal, and still reporting.
      await eventually(async () => removalsAsked() > before);
      const [leaving] = (await h.operation(res.body.operationId)).nodes;
      const moved = await assign(leaving.nodeId, poolB.poolId);
      expect(moved.status).toBe(409);
      expect(moved.body.error).toMatchObject({
        code: 'node_being_removed',
        details: { operationId: res.body.operationId },
      });
      const node = (await request(t.url).get(`/v1/nodes/${leaving.nodeId}`).set(admin)).body;
      expect(node.poolId).toBe(poolA.poolId);
      // The provisioner takes it down: it goes offline and is deleted out of pool-a only.
      silent = new Set([leaving.hostname]);
      const op = await h.finished(res.body.operationId, 30_000);
      expect(op).toMatchObject({ status: 'succeeded', error: null });
      expect((await h.nodesOf(poolA.poolId)).map((n) => n.hostname)).toHaveLength(1);
      expect((await h.nodesOf(poolB.poolId)).map((n) => n.hostname)).toEqual(['b-1']);
    } finally {
      await operator.stop();
    }
  });
});

describe('autoscaling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ OPERATION_DEADLINE_SEC: '60' });
  });
  afterAll(async () => t.close());

  it('scales out for sessions queued beyond the threshold, and back in after the idle cool-down', async () => {
    const admin = await t.auth('root', ['admin']);
    const alice = await t.auth('alice', ['user']);
    const h = helpers(t, admin);
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'auto',
      kind: 'gpu',
      gpuType: 'MIG_3g',
      autoscaling: { min: 0, max: 3, queueWaitSec: 1, idleCooldownSec: 2 },
    });
    const sessions = [];
    for (let i = 0; i < 2; i++) {
      const s = await request(t.url)
        .post('/v1/sessions')
        .set(alice)
        .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
      expect(s.body.status).toBe('queued');
      sessions.push(s.body.sessionId as string);
    }
    for (const id of sessions) {
      await eventually(
        async () =>
          (await request(t.url).get(`/v1/sessions/${id}`).set(alice)).body.status === 'running',
        15_000,
      );
    }
    const ops = async () =>
      (await request(t.url).get(`/v1/operations?poolId=${pool.poolId}`).set(admin)).body
        .items as Array<Operation & { reason: string; desiredSize: number }>;
    // The sessions run as soon as the nodes registered; the operation records success just after.
    const out = await eventually(async () => {
      const op = (await ops()).find((o) => o.reason?.startsWith('autoscale out'));
      return op && op.status !== 'running' && op.status !== 'pending' ? op : null;
    }, 15_000);
    expect(out).toMatchObject({ type: 'scale_node_pool', desiredSize: 2, status: 'succeeded' });
    for (const id of sessions) {
      await request(t.url).post(`/v1/sessions/${id}/terminate`).set(alice).expect(200);
    }
    const inward = await eventually(async () => {
      const op = (await ops()).find((o) => o.reason?.startsWith('autoscale in'));
      return op && op.status === 'succeeded' ? op : null;
    }, 20_000);
    expect(inward).toMatchObject({ desiredSize: 0 });
    expect(await h.nodesOf(pool.poolId)).toHaveLength(0);
  });
});

describe('resize by rolling replacement', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ OPERATION_DEADLINE_SEC: '60' });
  });
  afterAll(async () => t.close());

  it('replaces every node with one of the new shape, one at a time, moving sessions', async () => {
    const admin = await t.auth('root', ['admin']);
    const alice = await t.auth('alice', ['user']);
    const h = helpers(t, admin);
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, {
      name: 'cpu',
      kind: 'cpu',
      cpu: 16,
      memoryGiB: 64,
    });
    expect((await h.finished((await h.scale(pool.poolId, 2)).body.operationId)).status).toBe(
      'succeeded',
    );
    const before = await h.nodesOf(pool.poolId);
    const session = (
      await request(t.url)
        .post('/v1/sessions')
        .set(alice)
        .send({ kind: 'cpu', cpu: 8, memoryGiB: 32, poolId: pool.poolId })
    ).body;
    expect(session.status).toBe('running');
    const noop = await request(t.url)
      .post(`/v1/node-pools/${pool.poolId}/resize`)
      .set(admin)
      .send({ cpu: 16 });
    expect([noop.status, noop.body.error.code]).toEqual([409, 'resize_no_change']);
    // Neither shape given (absent or null): 400 naming cpu, before the pool is looked at.
    for (const body of [{}, { cpu: null, memoryGiB: null }, { cpu: null }]) {
      const refused = await request(t.url)
        .post(`/v1/node-pools/${pool.poolId}/resize`)
        .set(admin)
        .send(body);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
      expect(refused.body.error.details.fields).toEqual([
        { field: 'cpu', problems: ['give cpu, memoryGiB or both'] },
      ]);
    }
    const res = await request(t.url)
      .post(`/v1/node-pools/${pool.poolId}/resize`)
      .set(admin)
      .send({ cpu: 32, memoryGiB: 128 });
    expect(res.status).toBe(202);
    const op = await h.finished(res.body.operationId);
    expect(op).toMatchObject({ type: 'resize_node_pool', status: 'succeeded' });
    const names = op.steps.map((s) => s.name.split(' ')[0]);
    expect(names).toEqual([
      'choose_nodes',
      'add_node',
      'drain_node',
      'remove_node',
      'add_node',
      'drain_node',
      'remove_node',
      'update_spec',
    ]);
    const after = await h.nodesOf(pool.poolId);
    expect(after).toHaveLength(2);
    for (const n of after) {
      const node = (await request(t.url).get(`/v1/nodes/${n.nodeId}`).set(admin)).body;
      expect(node.capacity).toMatchObject({ cpu: 32, memoryGiB: 128 });
      expect(before.map((b) => b.nodeId)).not.toContain(n.nodeId);
    }
    const moved = (await request(t.url).get(`/v1/sessions/${session.sessionId}`).set(alice)).body;
    expect(moved.status).toBe('running');
    expect(after.map((n) => n.nodeId)).toContain(moved.nodeId);
    const view = (await request(t.url).get(`/v1/node-pools/${pool.poolId}`).set(admin)).body;
    expect(view).toMatchObject({ spec: { cpu: 32, memoryGiB: 128 }, size: 2, operation: null });
  });
});

describe('operations whose jobs Redis loses mid-way (JOBS_REPAIR_SEC=1)', () => {
  // A provisioner that accepts and never delivers: the scale-out waits for registrations
  // until its deadline, so it is still running when its jobs go.
  let t: TestApp;
  let server: http.Server;
  let h: ReturnType<typeof helpers>;
  beforeAll(async () => {
    let url: string;
    ({ server, url } = await neverDelivering());
    t = await startApp({ OPERATION_DEADLINE_SEC: '3', JOBS_REPAIR_SEC: '1', PROVISIONER_URL: url });
    h = helpers(t, await t.auth('root', ['admin']));
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Every key of this app in Redis, gone: what a Redis restarted empty leaves. */
  const loseEveryJob = async (): Promise<number> => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    let dropped = 0;
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${t.config.redisPrefix}:*`);
        cursor = next;
        if (keys.length > 0) dropped += await redis.del(...keys);
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
    return dropped;
  };

  it('re-arms them from state while running: the scale-out still ends, at its deadline', async () => {
    const clusterId = await h.createCluster();
    const pool = await h.createPool(clusterId, { name: 'lost-jobs', kind: 'gpu', gpuType: 'L40S' });
    const res = await h.scale(pool.poolId, 2);
    expect(res.status).toBe(202);
    await eventually(async () => (await h.operation(res.body.operationId)).status === 'running');
    expect(await loseEveryJob()).toBeGreaterThan(0);
    // Without a repair nothing would ever run it again: it would stay `running` for good.
    const op = await h.finished(res.body.operationId, 15_000);
    expect(op.status).toBe('timeout');
    expect(op.error).toContain('await_registration');
  });
});
