import { NodeDoc } from '../nodes/nodes.projection';
import { accepts, rankByBestFit } from './placement';

const node = (hostname: string, free: number, over: Partial<NodeDoc> = {}): NodeDoc => ({
  _id: hostname,
  _rev: 0,
  nodeId: hostname,
  clusterId: 'c1',
  hostname,
  role: 'gpu',
  poolId: null,
  mode: 'shared',
  labels: {},
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
  drain: null,
  registeredAt: '',
  changedAt: '',
  ...over,
});

const demand = { kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount: 2 };

describe('best-fit placement', () => {
  it('prefers the node left with the fewest free cards', () => {
    const ranked = rankByBestFit([node('a', 8), node('b', 2), node('c', 3)], demand);
    expect(ranked.map((n) => n.hostname)).toEqual(['b', 'c', 'a']);
  });

  it('breaks ties by hostname', () => {
    expect(rankByBestFit([node('z', 4), node('m', 4)], demand).map((n) => n.hostname)).toEqual([
      'm',
      'z',
    ]);
  });

  it('skips nodes that cannot take the demand', () => {
    const ranked = rankByBestFit(
      [
        node('full', 1),
        node('offline', 8, { online: false }),
        node('cordoned', 8, { cordon: { desired: true, observed: null, reason: null } }),
        node('draining', 8, { drain: { drainId: 'd', status: 'running' } }),
        node('cpu', 8, { role: 'cpu' }),
        node('dedicated-busy', 4, { mode: 'dedicated' }),
        node('ok', 8),
      ],
      demand,
    );
    expect(ranked.map((n) => n.hostname)).toEqual(['ok']);
  });

  it('lets an idle dedicated node take one session', () => {
    expect(accepts(node('d', 8, { mode: 'dedicated', runningSessions: 0 }), demand)).toBe(true);
  });

  it('places CPU sessions by free vCPU and memory', () => {
    const cpu = (h: string, usedCpu: number, usedMem: number) =>
      node(h, 0, {
        role: 'cpu',
        gpus: [],
        capacity: { cpu: 32, memoryGiB: 128, diskGiB: 1 },
        allocations: usedCpu
          ? { s: { sessionId: 's', owner: 'o', gpus: [], cpu: usedCpu, memoryGiB: usedMem } }
          : {},
        runningSessions: usedCpu ? 1 : 0,
      });
    const ranked = rankByBestFit([cpu('idle', 0, 0), cpu('half', 16, 64), cpu('nomem', 8, 127)], {
      kind: 'cpu',
      cpu: 8,
      memoryGiB: 32,
    });
    expect(ranked.map((n) => n.hostname)).toEqual(['half', 'idle']);
  });
});
