/**
 * The hardware vocabulary every layer shares (config's rate card, node reports, pools, sessions):
 * the GPU models the fleet knows, and the node shapes pools are made of.
 */
export const GPU_MODELS = ['L40S', 'HPC_GPU', 'MIG_1g', 'MIG_2g', 'MIG_3g'] as const;
export type GpuModel = (typeof GPU_MODELS)[number];

/** The GPU node types a pool may use: vCPUs and memory per node, and the memory of its card. */
export const GPU_CATALOG: Readonly<
  Record<GpuModel, { readonly cpu: number; readonly memoryGiB: number; readonly cardGiB: number }>
> = {
  L40S: { cpu: 16, memoryGiB: 64, cardGiB: 48 },
  HPC_GPU: { cpu: 32, memoryGiB: 128, cardGiB: 80 },
  MIG_1g: { cpu: 4, memoryGiB: 16, cardGiB: 10 },
  MIG_2g: { cpu: 8, memoryGiB: 32, cardGiB: 20 },
  MIG_3g: { cpu: 12, memoryGiB: 48, cardGiB: 40 },
};

/** CPU pools default to this node shape when none is given. */
export const DEFAULT_CPU_NODE = { cpu: 16, memoryGiB: 64 } as const;
