import { randomUUID } from 'node:crypto';
import {
  createTestDatabase,
  TestDatabase,
} from '../../libs/eventstore/test/support/postgres-database';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually, sleep } from '../support/reports';
import { recordMade } from '../support/test-run';

const LEASE_SEC = 2;

const leads = async (app: ChildApp): Promise<boolean> => {
  const res = await fetch(`${app.url}/health/ready`, { signal: AbortSignal.timeout(1000) });
  return ((await res.json()) as { leader: boolean }).leader;
};

/** The compiled app's lease gauges and the periods it ran (all names summed). */
const leaseMetrics = async (
  app: ChildApp,
): Promise<{ leader: number; epoch: number; periods: number }> => {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const value = (name: string): number =>
    Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  const periods = [...text.matchAll(/^fleet_periodic_runs_total\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
  return { leader: value('fleet_leader'), epoch: value('fleet_leader_epoch'), periods };
};

/**
 * Two replicas of the compiled app sharing one log (PostgreSQL) and one Redis: one leads and
 * runs the periodic work; killed with SIGKILL (no resignation), the other takes over within
 * LEADER_LEASE_SEC and runs it.
 */
describe(`two replicas on one Redis (LEADER_LEASE_SEC=${LEASE_SEC})`, () => {
  let db: TestDatabase;
  let first: ChildApp;
  let second: ChildApp;

  beforeAll(async () => {
    await ensureBuilt();
    db = await createTestDatabase('lease_e2e');
    const prefix = `fleet-child-${randomUUID().slice(0, 8)}`;
    recordMade('redis', prefix);
    const env = {
      EVENTSTORE_URL: db.url,
      REDIS_PREFIX: prefix,
      LEADER_LEASE_SEC: String(LEASE_SEC),
      // Repairs every second: periodic work to watch.
      JOBS_REPAIR_SEC: '1',
    };
    // One after the other: the first takes the free lease at its start.
    first = await startChildApp(env);
    second = await startChildApp(env);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([first?.kill('SIGKILL'), second?.kill('SIGTERM')]);
    await db?.drop();
  });

  it('has one leader run the periodic work; killed, the other leads within the lease and runs it', async () => {
    expect([await leads(first), await leads(second)]).toEqual([true, false]);
    await sleep(2500);
    const before = await leaseMetrics(first);
    expect(before.leader).toBe(1);
    expect(before.epoch).toBeGreaterThan(0);
    expect(before.periods).toBeGreaterThan(0);
    expect(await leaseMetrics(second)).toEqual({ leader: 0, epoch: 0, periods: 0 });

    const killedAt = Date.now();
    await first.kill('SIGKILL');
    await eventually(() => leads(second), 2 * LEASE_SEC * 1000, 20);
    const tookOver = Date.now() - killedAt;
    // The lease runs out at most LEADER_LEASE_SEC after the last renewal; polled every 20 ms.
    expect(tookOver).toBeLessThanOrEqual(LEASE_SEC * 1000 + 250);

    const after = await eventually(async () => {
      const m = await leaseMetrics(second);
      return m.periods > 0 ? m : null;
    }, 3000);
    expect(after.leader).toBe(1);
    expect(after.epoch).toBeGreaterThan(before.epoch);
    console.log(`the second replica led ${tookOver} ms after the first was killed`);
  }, 60_000);
});
