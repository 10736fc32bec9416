import type { NodeReport } from '../apps/control-plane/src/nodes/node.decider';

/** The synthetic fleet every node benchmark reports: deterministic names, 8-card L40S nodes. */
export const clusterIdOf = (c: number): string => `bench-c${c}`;
export const hostnameOf = (c: number, n: number): string => `gpu-${c}-${n}`;

/** One node as the operator's controller sends it (the DTO shape, observedAt when given). */
export type NodeReportBody = {
  hostname: string;
  role: 'gpu';
  labels: Record<string, string>;
  capacity: { cpu: number; memoryGiB: number; diskGiB: number };
  gpus: Array<{ uuid: string; model: 'L40S'; memoryGiB: number }>;
  kubeletReady: boolean;
  unschedulable: boolean;
  observedAt?: string;
};

export const nodeBody = (c: number, n: number, observedAt?: string): NodeReportBody => ({
  hostname: hostnameOf(c, n),
  role: 'gpu',
  labels: { 'fleet/mode': 'shared', 'topology.kubernetes.io/zone': `zone-${c % 3}` },
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: Array.from({ length: 8 }, (_, g) => ({
    uuid: `GPU-${c}-${n}-${g}`,
    model: 'L40S' as const,
    memoryGiB: 48,
  })),
  kubeletReady: true,
  unschedulable: false,
  ...(observedAt === undefined ? {} : { observedAt }),
});

/** The same node as the inventory controller normalises it for the service (no change from HTTP). */
export const nodeReport = (c: number, n: number): NodeReport => {
  const b = nodeBody(c, n);
  return {
    clusterId: clusterIdOf(c),
    hostname: b.hostname,
    role: b.role,
    labels: { ...b.labels },
    capacity: { ...b.capacity },
    gpus: b.gpus.map((g) => ({ ...g })),
    kubeletReady: b.kubeletReady,
    unschedulable: b.unschedulable,
    observedAt: null,
  };
};

/** A report request body: `count` nodes of cluster `c` from node `from` on (each with `observedAt` if given). */
export const reportBody = (c: number, from: number, count: number, observedAt?: string): string =>
  JSON.stringify({
    clusterId: clusterIdOf(c),
    nodes: Array.from({ length: count }, (_, i) => nodeBody(c, from + i, observedAt)),
  });
