import { SubscriptionRunner } from '@fleet/cqrs';
import { DelayedJobs } from '@fleet/jobs/port';
import { Metrics } from './metrics';

describe('Metrics scrape', () => {
  const runner = { status: async () => [] } as unknown as SubscriptionRunner;
  const follower = { isLeader: () => false, epoch: () => null };
  const noRuns = { periodicRunCounts: () => new Map<string, number>() };

  it('leaves out a queue whose backlog cannot be read in time, and answers the rest at once', async () => {
    const jobs = {
      registeredQueues: () => ['stuck', 'fine'],
      counts: (queue: string) =>
        queue === 'stuck'
          ? new Promise(() => undefined) // a Redis client retrying for seconds
          : Promise.resolve({ waiting: 1, delayed: 2, failed: 3, running: 0 }),
    } as unknown as DelayedJobs;
    const metrics = new Metrics(runner, jobs, follower, noRuns);
    const started = Date.now();
    const { body } = await metrics.render();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(body).toContain('fleet_delayed_jobs{queue="fine",state="delayed"} 2');
    expect(body).not.toContain('queue="stuck"');
  });

  it('exports whether this replica leads, its epoch, and the periods it ran', async () => {
    const jobs = { registeredQueues: () => [] } as unknown as DelayedJobs;
    const leading = new Metrics(
      runner,
      jobs,
      { isLeader: () => true, epoch: () => 7 },
      { periodicRunCounts: () => new Map([['autoscaler', 3]]) },
    );
    const { body } = await leading.render();
    expect(body).toContain('fleet_leader 1');
    expect(body).toContain('fleet_leader_epoch 7');
    expect(body).toContain('fleet_periodic_runs_total{name="autoscaler"} 3');
    const other = (await new Metrics(runner, jobs, follower, noRuns).render()).body;
    expect(other).toContain('fleet_leader 0');
    expect(other).toContain('fleet_leader_epoch 0');
  });
});
