import IORedis from 'ioredis';
import { systemContext, uuidFrom } from '@fleet/kernel';
import type { EventStore } from '@fleet/eventstore/port';
import { HEARTBEATS } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.module';
import type { HeartbeatStore } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.store';
import type { NodeReport } from '../../apps/control-plane/src/nodes/node-report.rules';
import { nodeStreamId } from '../../apps/control-plane/src/nodes/node.events';
import { InventoryService } from '../../apps/control-plane/src/nodes/reporting/inventory.service';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { TestApp } from '../support/app';
import { eventually } from '../support/reports';
import { twoAppsOnPostgres } from './two-apps';

const CLUSTER = 'c-order';
const node = (observedAt: string, kubeletReady: boolean): NodeReport => ({
  clusterId: CLUSTER,
  hostname: 'gpu-1',
  role: 'gpu',
  labels: {},
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: [{ uuid: 'GPU-order-1', model: 'L40S', memoryGiB: 48 }],
  kubeletReady,
  unschedulable: null,
  observedAt,
});

const reportOn = (app: TestApp, report: NodeReport, key: string) =>
  app.app
    .get(InventoryService)
    .report(CLUSTER, [report], systemContext(uuidFrom('order-race', key), { now: new Date() }));

/**
 * Two replicas receive two reports of one node: the older (NotReady, which would take the node
 * offline and end its sessions) on one, the newer (Ready, unchanged: appends nothing) on the
 * other. The first replica reads the node's heartbeat before the second records the newer
 * report, and decides after: the read is stale. The order claimed in Redis before appending
 * decides: the older report changes nothing.
 */
describe('two replicas deciding reports of one node against one stale heartbeat (PostgreSQL, Redis)', () => {
  let apps: [TestApp, TestApp];
  let close: () => Promise<void>;
  let redis: IORedis;
  beforeAll(async () => {
    ({ apps, close } = await twoAppsOnPostgres('ha_hb_order'));
    redis = new IORedis(apps[0].config.redisUrl!);
  }, 60_000);
  afterAll(async () => {
    redis.disconnect();
    await close();
  });

  it('applies the older report only if no newer one was recorded before it claimed its place', async () => {
    const [a, b] = apps;
    const nodeId = uuidFrom('node', CLUSTER, 'gpu-1');
    const t0 = new Date(Date.now() - 3000).toISOString();
    const t1 = new Date(Date.now() - 2000).toISOString(); // older
    const t2 = new Date(Date.now() - 1000).toISOString(); // newer
    await reportOn(a, node(t0, true), 'register');

    // Replica a reads the heartbeat (t0), then is held until b recorded t2.
    const heartbeatsA = a.app.get<HeartbeatStore>(HEARTBEATS);
    const read = heartbeatsA.get.bind(heartbeatsA);
    let readDone = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    jest.spyOn(heartbeatsA, 'get').mockImplementationOnce(async (ids) => {
      const beats = await read(ids);
      readDone = true;
      await gate;
      return beats;
    });
    const older = reportOn(a, node(t1, false), 'older');
    await eventually(async () => readDone, 5000, 5);

    const newer = await reportOn(b, node(t2, true), 'newer');
    expect(newer[0].status).toBe('ready');
    const key = `${a.config.redisPrefix}:heartbeats`;
    await eventually(
      async () => (await redis.hget(key, nodeId))?.endsWith(`:${Date.parse(t2)}`),
      5000,
      5,
    );
    release();

    const answer = await older;
    expect(answer[0].status).toBe('ready');
    const store = a.app.get<EventStore>(EVENT_STORE);
    const events = await store.readStream(nodeStreamId(nodeId));
    expect(events.map((e) => e.type)).not.toContain('NodeWentOffline.v1');
    expect(events).toHaveLength(1); // the registration only
  }, 60_000);
});
