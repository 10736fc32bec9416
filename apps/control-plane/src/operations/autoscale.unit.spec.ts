import { autoscaleDecision, boundsDecision } from './autoscale';

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

  describe('the bounds', () => {
    it('raises a pool below its minimum to it, with no demand at all', () => {
      expect(autoscaleDecision({ pool: gpuPool, size: 0, waiting: [], idleNodes: 0 })).toEqual({
        desiredSize: 1,
        reason: expect.stringMatching(/^autoscale out: 0 node\(s\), below the minimum of 1/),
      });
      const min3 = { ...gpuPool, autoscaling: { min: 3, max: 4 } };
      expect(
        autoscaleDecision({ pool: min3, size: 1, waiting: [], idleNodes: 1 })?.desiredSize,
      ).toBe(3);
    });

    it('raises it past the minimum when waiting sessions need more, still within max', () => {
      const min2 = { ...gpuPool, autoscaling: { min: 2, max: 4 } };
      expect(
        autoscaleDecision({ pool: min2, size: 0, waiting: [l40s(2), l40s(2)], idleNodes: 0 })
          ?.desiredSize,
      ).toBe(2);
      expect(
        autoscaleDecision({
          pool: min2,
          size: 1,
          waiting: [l40s(2), l40s(2), l40s(2)],
          idleNodes: 0,
        })?.desiredSize,
      ).toBe(4);
    });

    it('lowers a pool above its maximum to it, waiting sessions or not', () => {
      for (const waiting of [[], [l40s(1)]]) {
        expect(autoscaleDecision({ pool: gpuPool, size: 6, waiting, idleNodes: 0 })).toEqual({
          desiredSize: 4,
          reason: expect.stringMatching(/^autoscale in: 6 node\(s\), above the maximum of 4/),
        });
      }
    });

    it('holds every decision within [min, max] (or moving towards it)', () => {
      for (let size = 0; size <= 6; size++) {
        for (const idleNodes of [0, 1, 3]) {
          for (const waiting of [[], [l40s(2)], [l40s(2), l40s(2), l40s(2)]]) {
            const d = autoscaleDecision({ pool: gpuPool, size, waiting, idleNodes });
            if (d === null) {
              expect(size).toBeGreaterThanOrEqual(1);
              expect(size).toBeLessThanOrEqual(4);
            } else {
              expect(d.desiredSize).toBeGreaterThanOrEqual(1);
              expect(d.desiredSize).toBeLessThanOrEqual(4);
            }
          }
        }
      }
    });
  });

  it('boundsDecision alone: nothing within the bounds', () => {
    expect(boundsDecision(2, { min: 1, max: 4 })).toBeNull();
    expect(boundsDecision(0, { min: 0, max: 4 })).toBeNull();
    expect(boundsDecision(5, { min: 1, max: 4 })?.desiredSize).toBe(4);
    expect(boundsDecision(0, { min: 2, max: 4 })?.desiredSize).toBe(2);
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
