import { DomainError } from '@fleet/kernel';
import { GPU_CATALOG, GpuModel } from '../catalog/catalog';

/**
 * A GPU pool's node keeps its type's shape: vCPUs and memory in the catalog's proportion, one
 * type's worth (the seed's node) per card up to the node's cards: an L40S node with 2 cards is
 * 16 vCPU/64 GiB or 32/128. Anything else is refused 409 gpu_shape_mismatch, naming the shapes
 * it may take; null when the shape is one of them.
 */
export const gpuShapeRefusal = (
  gpuType: GpuModel,
  gpusPerNode: number,
  shape: { readonly cpu: number; readonly memoryGiB: number },
): DomainError | null => {
  const type = GPU_CATALOG[gpuType];
  const allowed = Array.from({ length: Math.max(1, gpusPerNode) }, (_, i) => ({
    cpu: type.cpu * (i + 1),
    memoryGiB: type.memoryGiB * (i + 1),
  }));
  if (allowed.some((a) => a.cpu === shape.cpu && a.memoryGiB === shape.memoryGiB)) return null;
  return new DomainError(
    'gpu_shape_mismatch',
    `a ${gpuType} node is ${type.cpu} vCPU/${type.memoryGiB} GiB per card (up to ${allowed.length} card(s)), not ${shape.cpu} vCPU/${shape.memoryGiB} GiB`,
    'conflict',
    { gpuType, cpu: shape.cpu, memoryGiB: shape.memoryGiB, allowed },
  );
};
