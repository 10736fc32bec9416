/** Builders for operator inventory reports in e2e tests. */
export type NodeInput = {
  hostname: string;
  role?: 'gpu' | 'cpu' | 'master' | 'storage';
  labels?: Record<string, string>;
  capacity?: { cpu: number; memoryGiB: number; diskGiB: number };
  gpus?: Array<{ uuid: string; model: string; memoryGiB: number }>;
  kubeletReady?: boolean;
  unschedulable?: boolean;
  observedAt?: string;
};

export const gpuNode = (
  hostname: string,
  cards = 2,
  model = 'L40S',
  over: Partial<NodeInput> = {},
): NodeInput => ({
  hostname,
  role: 'gpu',
  labels: { 'fleet/mode': 'shared' },
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: Array.from({ length: cards }, (_, i) => ({
    uuid: `GPU-${hostname}-${i}`,
    model,
    memoryGiB: 48,
  })),
  kubeletReady: true,
  unschedulable: false,
  ...over,
});

export const cpuNode = (
  hostname: string,
  cpu = 32,
  memoryGiB = 128,
  over: Partial<NodeInput> = {},
): NodeInput => ({
  hostname,
  role: 'cpu',
  labels: {},
  capacity: { cpu, memoryGiB, diskGiB: 500 },
  gpus: [],
  kubeletReady: true,
  unschedulable: false,
  ...over,
});

export const report = (clusterId: string, nodes: NodeInput[]) => ({ clusterId, nodes });

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a truthy value or the time is up. */
export const eventually = async <T>(
  check: () => Promise<T>,
  ms = 10_000,
  every = 50,
): Promise<NonNullable<T>> => {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until)
      throw last instanceof Error ? last : new Error('condition not met in time');
    await sleep(every);
  }
};
