import { randomUUID } from 'node:crypto';
import { LivenessSaga } from '../../apps/control-plane/src/nodes/liveness/liveness.saga';
import { AutoscalerService } from '../../apps/control-plane/src/operations/autoscaler.service';
import { startApp, TestApp } from '../support/app';
import { sleep } from '../support/reports';
import { recordMade } from '../support/test-run';

describe('periodic work with two processes sharing Redis', () => {
  // The liveness reconciler runs every second at NODE_STALE_SEC=2, the autoscaler every second.
  const env = { NODE_STALE_SEC: '2', REDIS_PREFIX: `fleet-e2e-${randomUUID().slice(0, 8)}` };
  const apps: TestApp[] = [];
  beforeAll(async () => {
    recordMade('redis', env.REDIS_PREFIX);
    apps.push(await startApp(env), await startApp(env));
  });
  afterAll(async () => {
    await Promise.all(apps.map((t) => t.close()));
  });

  it('runs each period once in total, not once in each process', async () => {
    const reconciles = apps.map((t) => jest.spyOn(t.app.get(LivenessSaga), 'reconcile'));
    const ticks = apps.map((t) => jest.spyOn(t.app.get(AutoscalerService), 'tick'));
    await sleep(4200);
    const total = (spies: jest.SpyInstance[]) =>
      spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    // About four periods of one second: a timer in each process would make it about eight.
    expect(total(reconciles)).toBeGreaterThanOrEqual(3);
    expect(total(reconciles)).toBeLessThanOrEqual(5);
    expect(total(ticks)).toBeGreaterThanOrEqual(3);
    expect(total(ticks)).toBeLessThanOrEqual(5);
  });
});
