import { DelayedJobs, JobSlotsBusyError } from '@fleet/jobs/port';
import { systemClock } from '@fleet/kernel';
import { OperationsSaga } from './operations.saga';

const sagaWith = (schedule: DelayedJobs['schedule']) =>
  new OperationsSaga(
    null as never,
    null as never,
    { schedule } as DelayedJobs,
    null as never,
    null as never,
    null as never,
    systemClock,
    null as never,
    null as never,
  );
const op = { operationId: 'op-1', deadlineAt: '2026-12-03T09:00:00.000Z' };

describe('arming an operation', () => {
  it('goes on when its jobs are still running on a dead worker (a start right after a SIGKILL)', async () => {
    const asked: string[] = [];
    const saga = sagaWith(async (queue, jobId) => {
      asked.push(queue);
      throw new JobSlotsBusyError(queue, jobId);
    });
    await expect(saga.arm(op)).resolves.toBeUndefined();
    expect(asked).toEqual(['operation-deadline', 'operation-step']);
  });

  it('fails on anything else', async () => {
    const saga = sagaWith(() => Promise.reject(new Error('Connection is closed.')));
    await expect(saga.arm(op)).rejects.toThrow('Connection is closed.');
  });
});
