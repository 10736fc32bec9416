import { systemClock } from '@fleet/kernel';
import { InProcessJobs } from '@fleet/jobs';
import { EmbeddedReadModelStore } from '@fleet/readmodels/embedded-read-model-store';
import { DRAIN_STEP_QUEUE, DrainSaga } from './drain.saga';
import { DRAINS } from './drains.projection';

/** The periodic repair alone: its collaborators are the read model and the job queue (ports). */
describe('drain saga repair (jobs lost while running)', () => {
  it('re-arms a step for each running drain whose job is gone, and for no other', async () => {
    const readModels = new EmbeddedReadModelStore();
    readModels.defineCollection(DRAINS);
    const drain = (drainId: string, status: 'running' | 'completed') => ({
      _id: drainId,
      _rev: 0,
      drainId,
      nodeId: `node-of-${drainId}`,
      mode: 'relocate',
      status,
    });
    await readModels.commit(
      'drains',
      [
        { op: 'upsert', collection: DRAINS, doc: drain('kept', 'running') },
        { op: 'upsert', collection: DRAINS, doc: drain('lost', 'running') },
        { op: 'upsert', collection: DRAINS, doc: drain('done', 'completed') },
      ],
      3,
    );
    // Registered but not started: jobs stay queued, where liveJobIds sees them.
    const jobs = new InProcessJobs();
    jobs.register(DRAIN_STEP_QUEUE, async () => undefined);
    await jobs.schedule(DRAIN_STEP_QUEUE, 'kept', Date.now() + 60_000, { drainId: 'kept' });
    const saga = new DrainSaga(
      null as never,
      null as never,
      jobs,
      readModels,
      systemClock,
      null as never,
      null as never,
    );

    expect(await saga.repair()).toBe(1);
    expect([...(await jobs.liveJobIds(DRAIN_STEP_QUEUE))].sort()).toEqual(['kept', 'lost']);
    // The kept drain's step keeps its time; a second pass finds nothing missing.
    expect(await jobs.scheduledAt(DRAIN_STEP_QUEUE, 'kept')).toBeGreaterThan(Date.now() + 50_000);
    expect(await saga.repair()).toBe(0);
    await jobs.close();
  });
});
