import { GPU_CATALOG, GPU_MODELS } from './catalog';

describe('the GPU catalog', () => {
  it('has the seed table: vCPUs and memory per node for each of the five types', () => {
    const shapes = Object.fromEntries(
      GPU_MODELS.map((m) => [m, [GPU_CATALOG[m].cpu, GPU_CATALOG[m].memoryGiB]]),
    );
    expect(shapes).toEqual({
      L40S: [16, 64],
      HPC_GPU: [32, 128],
      MIG_1g: [4, 16],
      MIG_2g: [8, 32],
      MIG_3g: [12, 48],
    });
  });

  it('names a MIG profile for the slice types only, matching their memory', () => {
    for (const model of GPU_MODELS) {
      const { mig, cardGiB } = GPU_CATALOG[model];
      if (!model.startsWith('MIG_')) {
        expect(mig).toBeNull();
        continue;
      }
      const slices = Number(model.slice('MIG_'.length, -1));
      expect(mig).toEqual({ profile: `${slices}g.${cardGiB}gb`, computeSlices: slices });
    }
  });
});
