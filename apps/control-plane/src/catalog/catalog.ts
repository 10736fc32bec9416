/**
 * The hardware vocabulary every layer shares (config's rate card, node reports, pools, sessions):
 * the GPU models the fleet knows, and the node shapes pools are made of.
 */
export const GPU_MODELS = ['L40S', 'HPC_GPU', 'MIG_1g', 'MIG_2g', 'MIG_3g'] as const;
export type GpuModel = (typeof GPU_MODELS)[number];

/**
 * A MIG slice of an 80 GB card (the HPC_GPU's): the profile NVIDIA names it by
 * (`<compute slices>g.<memory>gb`) and its compute slices out of the card's seven.
 */
export type MigProfile = { readonly profile: string; readonly computeSlices: number };

/**
 * The GPU node types a pool may use (the QKS seed's table): vCPUs and memory per node, the
 * memory of its card (or MIG slice), and the MIG profile of a slice type (null: a whole card).
 */
export const GPU_CATALOG: Readonly<
  Record<
    GpuModel,
    {
      readonly cpu: number;
      readonly memoryGiB: number;
      readonly cardGiB: number;
      readonly mig: MigProfile | null;
    }
  >
> = {
  L40S: { cpu: 16, memoryGiB: 64, cardGiB: 48, mig: null },
  HPC_GPU: { cpu: 32, memoryGiB: 128, cardGiB: 80, mig: null },
  MIG_1g: { cpu: 4, memoryGiB: 16, cardGiB: 10, mig: { profile: '1g.10gb', computeSlices: 1 } },
  MIG_2g: { cpu: 8, memoryGiB: 32, cardGiB: 20, mig: { profile: '2g.20gb', computeSlices: 2 } },
  MIG_3g: { cpu: 12, memoryGiB: 48, cardGiB: 40, mig: { profile: '3g.40gb', computeSlices: 3 } },
};

/** CPU pools default to this node shape when none is given. */
export const DEFAULT_CPU_NODE = { cpu: 16, memoryGiB: 64 } as const;
