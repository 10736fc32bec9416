import { DelayedJobs, JobSlotsBusyError } from '../../../../libs/jobs/src/port';
import { QueueMisses, SessionQueueService } from './session-queue.service';

const queueWith = (schedule: DelayedJobs['schedule']) =>
  new SessionQueueService(
    null as never,
    { schedule } as DelayedJobs,
    null as never,
    null as never,
    null as never,
  );

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

describe('a queue pass, after a session did not fit', () => {
  const gpu = (gpuCount: number, poolId: string | null = null, owner = 'alice') => ({
    demand: { kind: 'gpu' as const, gpuModel: 'MIG_3g' as const, gpuCount },
    poolId,
    owner,
  });
  const cpu = (cores: number, memoryGiB: number) => ({
    demand: { kind: 'cpu' as const, cpu: cores, memoryGiB },
    poolId: null,
    owner: 'alice',
  });
  const after = (...missed: Array<ReturnType<typeof gpu> | ReturnType<typeof cpu>>) => {
    const misses = new QueueMisses();
    missed.forEach((s) => misses.missed(s));
    return misses;
  };

  it('skips a session no smaller, of the same model, pool and owner', () => {
    expect(after(gpu(1, 'p')).covers(gpu(2, 'p'))).toBe(true);
    expect(after(gpu(2, 'p')).covers(gpu(1, 'p'))).toBe(false);
  });

  it('still tries a session for another pool: the miss says nothing of its nodes', () => {
    expect(after(gpu(1, 'q')).covers(gpu(2, 'p'))).toBe(false);
    expect(after(gpu(1, 'q')).covers(gpu(1, null))).toBe(false);
    expect(after(gpu(1, null)).covers(gpu(1, 'p'))).toBe(false);
  });

  it('still tries a session of another owner: a restricted pool may take them', () => {
    expect(after(gpu(1, null, 'bob')).covers(gpu(1, null, 'alice'))).toBe(false);
  });

  it('still tries a CPU session that asks for less memory, however many vCPUs', () => {
    expect(after(cpu(4, 500)).covers(cpu(8, 16))).toBe(false);
    expect(after(cpu(4, 500)).covers(cpu(8, 500))).toBe(true);
    expect(after(cpu(4, 500), cpu(16, 16)).covers(cpu(16, 600))).toBe(true);
    expect(after(cpu(4, 500), cpu(16, 16)).covers(cpu(8, 100))).toBe(false);
  });
});
