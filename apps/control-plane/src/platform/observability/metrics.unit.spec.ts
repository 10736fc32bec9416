import { SubscriptionRunner } from '../../../../../libs/cqrs/src';
import { DelayedJobs } from '../../../../../libs/jobs/src/port';
import { Metrics } from './metrics';

describe('Metrics scrape', () => {
  const runner = { status: async () => [] } as unknown as SubscriptionRunner;

  it('leaves out a queue whose backlog cannot be read in time, and answers the rest at once', async () => {
    const jobs = {
      registeredQueues: () => ['stuck', 'fine'],
      counts: (queue: string) =>
        queue === 'stuck'
          ? new Promise(() => undefined) // a Redis client retrying for seconds
          : Promise.resolve({ waiting: 1, delayed: 2, failed: 3, running: 0 }),
    } as unknown as DelayedJobs;
    const metrics = new Metrics(runner, jobs);
    const started = Date.now();
    const { body } = await metrics.render();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(body).toContain('fleet_delayed_jobs{queue="fine",state="delayed"} 2');
    expect(body).not.toContain('queue="stuck"');
  });
});
