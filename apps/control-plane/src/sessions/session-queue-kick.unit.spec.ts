import { DelayedJobs, JobSlotsBusyError } from '../../../../libs/jobs/src/port';
import { SessionQueueService } from './session-queue.service';

const queueWith = (schedule: DelayedJobs['schedule']) =>
  new SessionQueueService(null as never, { schedule } as DelayedJobs, null as never);

describe('the queue kick', () => {
  it('goes on when both tick slots are running: a pass is coming anyway (a start right after a SIGKILL)', async () => {
    const busy = queueWith(() =>
      Promise.reject(new JobSlotsBusyError('session-queue-tick', 'tick')),
    );
    await expect(busy.kick()).resolves.toBeUndefined();
  });

  it('fails on anything else', async () => {
    const down = queueWith(() => Promise.reject(new Error('Connection is closed.')));
    await expect(down.kick()).rejects.toThrow('Connection is closed.');
  });
});
