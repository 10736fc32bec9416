import request from 'supertest';
import { HEARTBEATS } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.module';
import { HeartbeatStore } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.store';
import { InventoryService } from '../../apps/control-plane/src/nodes/reporting/inventory.service';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, NodeInput, report, sleep } from '../support/reports';

const ROUNDS = 20;

/**
 * Two reports of one node in flight together: a newer one that changes nothing, and an older
 * one (by observedAt) that would change the node. The older one must change nothing, whichever
 * of the two the server finishes first. The newer is sent first; the older is sent once the
 * server has read the newer's heartbeats, and the newer's sighting is written only once the
 * older has reached the service: the window a tester hit 15 times in 20 by chance, every time.
 * A store held in process (the embedded one) is read and written without a promise
 * (`getNow`, `touchNow`): the newer one's read, decision and sighting are one stretch of
 * the loop, so the older one is sent from its read and can only arrive after it; seen
 * through promises only, the embedded store is raced with the hold as Redis is.
 */
const raceOlderAgainstNewer = (
  mode: string,
  host: string,
  redis: boolean,
  promisesOnly = false,
  awaitedSightings = false,
) =>
  describe(`two reports of a node racing (${mode})`, () => {
    let t: TestApp;
    let operator: Record<string, string>;
    let admin: Record<string, string>;
    beforeAll(async () => {
      t = await startApp({ NODE_STALE_SEC: '300' }, { redis });
      if (promisesOnly) {
        // The same store, answering only through get and touch (as a store out of process).
        Object.assign(t.app.get<HeartbeatStore>(HEARTBEATS), {
          getNow: undefined,
          touchNow: undefined,
        });
      }
      if (awaitedSightings) {
        // Every report waits for its sightings (as while the store's writes fail): the newer
        // one's is held below until the older one has reached the service.
        Object.assign(t.app.get<HeartbeatStore>(HEARTBEATS), { touchLater: undefined });
      }
      operator = await t.auth('op', ['operator'], ['c1']);
      admin = await t.auth('root', ['admin']);
    });
    afterEach(() => jest.restoreAllMocks());
    afterAll(async () => t.close());

    const post = (node: NodeInput) =>
      request(t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(report('c1', [node]));
    const node = async (nodeId: string) =>
      (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body;
    const streamOf = async (nodeId: string): Promise<Array<{ type: string }>> =>
      (await request(t.url).get(`/v1/streams/node-${nodeId}?limit=1000`).set(admin)).body.events;

    /** Registers `registered`, then races `older` (1 s after it) against `newer` (2 s after). */
    const race = async (
      registered: NodeInput,
      older: Partial<NodeInput>,
    ): Promise<{ nodeId: string; appended: string[] }> => {
      const at = Date.now();
      const iso = (ms: number) => new Date(at + ms).toISOString();
      const first = await post({ ...registered, observedAt: iso(0) });
      expect(first.status).toBe(200);
      const nodeId: string = first.body.nodes[0].nodeId;
      await eventually(async () => (await node(nodeId)).status === 'ready');
      const before = (await streamOf(nodeId)).length;

      const olderAt = at + 1_000;
      let olderArrived!: () => void;
      const arrived = new Promise<void>((resolve) => (olderArrived = resolve));
      let olderSent: Promise<request.Response> | undefined;
      const heartbeats = t.app.get<HeartbeatStore>(HEARTBEATS);
      const inventory = t.app.get(InventoryService);
      const reportNodes = inventory.report.bind(inventory);
      /** The newer one has read its node's heartbeats: now the older one is sent. */
      const read = (ids: readonly string[]): void => {
        if (olderSent === undefined && ids.includes(nodeId))
          olderSent = post({ ...registered, ...older, observedAt: iso(1_000) }).then((r) => r);
      };
      const { getNow } = heartbeats;
      if (getNow) {
        expect(redis).toBe(false); // only the embedded store answers in process
        jest.spyOn(heartbeats as Required<HeartbeatStore>, 'getNow').mockImplementation((ids) => {
          read(ids);
          return getNow.call(heartbeats, ids);
        });
      }
      const get = heartbeats.get.bind(heartbeats);
      const touch = heartbeats.touch.bind(heartbeats);
      jest.spyOn(heartbeats, 'get').mockImplementation((ids) => {
        read(ids);
        return get(ids);
      });
      let held = false;
      jest.spyOn(heartbeats, 'touch').mockImplementation(async (beats) => {
        // The newer one's sighting waits until the older one reached the service.
        if (!held && beats.some((b) => b.nodeId === nodeId)) {
          held = true;
          // Bounded: if the older one never reached the service, the test fails, not hangs.
          await Promise.race([arrived, sleep(2_000)]);
        }
        return touch(beats);
      });
      jest.spyOn(inventory, 'report').mockImplementation((clusterId, reports, ctx) => {
        const reported = reportNodes(clusterId, reports, ctx);
        if (reports.some((r) => r.observedAt !== null && Date.parse(r.observedAt) === olderAt))
          olderArrived();
        return reported;
      });

      const newer = await post({ ...registered, observedAt: iso(2_000) });
      expect(newer.status).toBe(200);
      expect((await olderSent)?.status).toBe(200);
      jest.restoreAllMocks();
      const appended = (await streamOf(nodeId)).slice(before).map((e) => e.type);
      return { nodeId, appended };
    };

    it('keeps a Ready node online when an older NotReady report races a newer unchanged one', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { nodeId, appended } = await race(gpuNode(`${host}-ready-${round}`), {
          kubeletReady: false,
        });
        expect(appended).toEqual([]);
        const after = await node(nodeId);
        expect(after.status).toBe('ready');
        expect(after.offlineReason ?? null).toBeNull();
      }
    });

    it("keeps the newer report's labels when an older report with other labels races it", async () => {
      for (let round = 0; round < ROUNDS / 2; round++) {
        // The mode label is the one a node's view shows (shared, as gpuNode registers it).
        const { nodeId, appended } = await race(gpuNode(`${host}-labels-${round}`), {
          labels: { 'fleet/mode': 'dedicated' },
        });
        expect(appended).toEqual([]);
        expect((await node(nodeId)).mode).toBe('shared');
      }
    });
  });

raceOlderAgainstNewer('heartbeats in Redis', 'redis', true);
raceOlderAgainstNewer('heartbeats in Redis, sightings awaited', 'redis-awaited', true, false, true);
raceOlderAgainstNewer('embedded', 'embedded', false);
raceOlderAgainstNewer('embedded, through promises only', 'promised', false, true);
