import { DomainError, systemContext, uuidFrom } from '@fleet/kernel';
import type { NodeReport } from '../../apps/control-plane/src/nodes/node-report.rules';
import { nodeStreamId } from '../../apps/control-plane/src/nodes/node.events';
import { InventoryService } from '../../apps/control-plane/src/nodes/reporting/inventory.service';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import type { EventStore } from '@fleet/eventstore/port';
import { TestApp } from '../support/app';
import { twoAppsOnPostgres } from './two-apps';

const node = (hostname: string, uuid: string): NodeReport => ({
  clusterId: 'c-race',
  hostname,
  role: 'gpu',
  labels: {},
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: [{ uuid, model: 'L40S', memoryGiB: 48 }],
  kubeletReady: true,
  unschedulable: null,
  observedAt: null,
});

const reportOn = (app: TestApp, report: NodeReport, key: string) =>
  app.app
    .get(InventoryService)
    .report('c-race', [report], systemContext(uuidFrom('gpu-race', key), { now: new Date() }));

/**
 * Two replicas each receive a report of a different node of one cluster, both with the same new
 * GPU uuid, at the same moment: neither read model shows the other's node yet, so the read check
 * passes on both; the cluster's claims stream (appended with the revision read) lets one node
 * take the card and refuses the other report whole (409 gpu_uuid_conflict, no node event).
 */
describe('one GPU uuid reported for two nodes through two replicas at once (PostgreSQL)', () => {
  let apps: [TestApp, TestApp];
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ apps, close } = await twoAppsOnPostgres('ha_gpu_claims'));
  }, 60_000);
  afterAll(() => close());

  it('lets one node take the card and refuses the other report, every time', async () => {
    const store = apps[0].app.get<EventStore>(EVENT_STORE);
    for (let round = 0; round < 10; round++) {
      const uuid = `GPU-race-${round}`;
      const hosts = [`a-${round}`, `b-${round}`];
      const outcomes = await Promise.allSettled(
        apps.map((app, i) => reportOn(app, node(hosts[i], uuid), `${round}-${i}`)),
      );
      const won = outcomes.findIndex((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toBeGreaterThanOrEqual(0);
      expect(lost).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(DomainError);
      expect(lost[0].reason).toMatchObject({
        code: 'gpu_uuid_conflict',
        details: { uuid, hostname: hosts[1 - won] },
      });
      // The refused node was never registered; the winner holds the card.
      const loserId = uuidFrom('node', 'c-race', hosts[1 - won]);
      const winnerId = uuidFrom('node', 'c-race', hosts[won]);
      expect(await store.streamRevision(nodeStreamId(loserId))).toBeNull();
      const winner = await store.readStream(nodeStreamId(winnerId));
      expect(JSON.stringify(winner[0].data)).toContain(uuid);
    }
  }, 60_000);

  it('refuses the card to a node reported through the other replica while its holder holds it', async () => {
    const uuid = 'GPU-moved';
    await reportOn(apps[0], node('first', uuid), 'moved-1');
    await expect(reportOn(apps[1], node('second', uuid), 'moved-2')).rejects.toMatchObject({
      code: 'gpu_uuid_conflict',
    });
  }, 30_000);
});
