import { gpuShapeRefusal } from './gpu-shape';

describe('a GPU pool resize keeps its type shape', () => {
  it('takes the catalog shape per card, up to the cards of a node', () => {
    expect(gpuShapeRefusal('L40S', 1, { cpu: 16, memoryGiB: 64 })).toBeNull();
    expect(gpuShapeRefusal('L40S', 2, { cpu: 32, memoryGiB: 128 })).toBeNull();
    expect(gpuShapeRefusal('MIG_3g', 4, { cpu: 48, memoryGiB: 192 })).toBeNull();
  });

  it('refuses another proportion, or more than the cards, with gpu_shape_mismatch', () => {
    const off = gpuShapeRefusal('L40S', 1, { cpu: 32, memoryGiB: 64 });
    expect(off).toMatchObject({
      code: 'gpu_shape_mismatch',
      kind: 'conflict',
      details: { gpuType: 'L40S', cpu: 32, memoryGiB: 64, allowed: [{ cpu: 16, memoryGiB: 64 }] },
    });
    expect(gpuShapeRefusal('L40S', 1, { cpu: 32, memoryGiB: 128 })?.code).toBe(
      'gpu_shape_mismatch',
    );
    expect(gpuShapeRefusal('HPC_GPU', 2, { cpu: 16, memoryGiB: 64 })?.details).toMatchObject({
      allowed: [
        { cpu: 32, memoryGiB: 128 },
        { cpu: 64, memoryGiB: 256 },
      ],
    });
  });
});
