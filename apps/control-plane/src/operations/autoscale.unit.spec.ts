import { autoscaleDecision } from './autoscale';

const gpuPool = {
  kind: 'gpu' as const,
  gpuType: 'L40S' as const,
  spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 2 },
  autoscaling: { min: 1, max: 4 },
};
const l40s = (gpuCount: number) => ({ kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount });

describe('autoscale decision', () => {
  describe('when sessions have waited longer than the threshold', () => {
    it('scales out by the nodes their cards need', () => {
      const decision = autoscaleDecision({
        pool: gpuPool,
        size: 1,
        waiting: [l40s(1), l40s(2)],
        idleNodes: 0,
      });
      expect(decision).toEqual({ desiredSize: 3, reason: expect.stringMatching(/^autoscale out/) });
    });
    it('never beyond max, and not at all at max', () => {
      expect(
        autoscaleDecision({ pool: gpuPool, size: 3, waiting: [l40s(2), l40s(2)], idleNodes: 0 })
          ?.desiredSize,
      ).toBe(4);
      expect(
        autoscaleDecision({ pool: gpuPool, size: 4, waiting: [l40s(1)], idleNodes: 2 }),
      ).toBeNull();
    });
    it('ignores sessions no node of the pool could hold', () => {
      const other = { kind: 'gpu' as const, gpuModel: 'MIG_1g' as const, gpuCount: 1 };
      expect(
        autoscaleDecision({ pool: gpuPool, size: 2, waiting: [l40s(3), other], idleNodes: 0 }),
      ).toBeNull();
    });
  });

  it('scales in by the long-idle nodes, down to min', () => {
    expect(autoscaleDecision({ pool: gpuPool, size: 4, waiting: [], idleNodes: 2 })).toEqual({
      desiredSize: 2,
      reason: expect.stringMatching(/^autoscale in/),
    });
    expect(
      autoscaleDecision({ pool: gpuPool, size: 2, waiting: [], idleNodes: 2 })?.desiredSize,
    ).toBe(1);
    expect(autoscaleDecision({ pool: gpuPool, size: 1, waiting: [], idleNodes: 1 })).toBeNull();
  });

  it('does not raise a pool below its minimum on its own (demand only)', () => {
    expect(autoscaleDecision({ pool: gpuPool, size: 0, waiting: [], idleNodes: 0 })).toBeNull();
  });

  it('sizes CPU pools by vCPUs and memory', () => {
    const cpuPool = {
      ...gpuPool,
      kind: 'cpu' as const,
      gpuType: null,
      autoscaling: { min: 0, max: 9 },
    };
    const cpu = (c: number, m: number) => ({ kind: 'cpu' as const, cpu: c, memoryGiB: m });
    expect(
      autoscaleDecision({ pool: cpuPool, size: 0, waiting: [cpu(8, 60), cpu(8, 60)], idleNodes: 0 })
        ?.desiredSize,
    ).toBe(2);
  });
});
