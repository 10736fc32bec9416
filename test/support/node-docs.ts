import { NodeDoc } from '../../apps/control-plane/src/nodes/nodes.projection';

/**
 * A Nodes read-model document of a ready 8-card L40S node in cluster c1 with `free` cards
 * free (the others held by one session), for placement specs; `over` replaces any field.
 */
export const gpuNodeDoc = (
  hostname: string,
  free: number,
  over: Partial<NodeDoc> = {},
): NodeDoc => ({
  _id: hostname,
  _rev: 0,
  nodeId: hostname,
  clusterId: 'c1',
  hostname,
  role: 'gpu',
  poolId: null,
  mode: 'shared',
  labels: {},
  provisioner: null,
  status: 'ready',
  online: true,
  offlineReason: null,
  gpuCount: 8,
  runningSessions: 8 - free > 0 ? 1 : 0,
  gpuModel: 'L40S',
  freeCards: free,
  freeCpu: 64,
  freeMemoryGiB: 512,
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 100 },
  gpus: Array.from({ length: 8 }, (_, i) => ({
    uuid: `${hostname}-${i}`,
    model: 'L40S',
    memoryGiB: 48,
    sessionId: i < 8 - free ? 'busy' : null,
    owner: i < 8 - free ? 'x' : null,
  })),
  allocations: {},
  cordon: { desired: false, observed: false, reason: null },
  cordonSynced: true,
  drain: null,
  registeredAt: '',
  changedAt: '',
  ...over,
});
