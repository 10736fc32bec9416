import { SessionDemand, NodeDoc } from '../nodes';
import fc from 'fast-check';
import { gpuNodeDoc as node } from '../../../../test/support/node-docs';
import { FitList, NodeFit, accepts, fitOf, rankByBestFit } from './placement';

const rank = (nodes: NodeDoc[], d: SessionDemand, poolId: string | null = null, limit?: number) =>
  rankByBestFit(nodes.map(fitOf), d, poolId, limit).map((n) => n.hostname);

const demand = { kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount: 2 };

describe('best-fit placement', () => {
  it('prefers the node left with the fewest free cards', () => {
    expect(rank([node('a', 8), node('b', 2), node('c', 3)], demand)).toEqual(['b', 'c', 'a']);
  });

  it('breaks ties by hostname', () => {
    expect(rank([node('z', 4), node('m', 4)], demand)).toEqual(['m', 'z']);
  });

  it('skips nodes that cannot take the demand', () => {
    const ranked = rank(
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
    expect(ranked).toEqual(['ok']);
  });

  it('lets an idle dedicated node take one session', () => {
    expect(accepts(fitOf(node('d', 8, { mode: 'dedicated', runningSessions: 0 })), demand)).toBe(
      true,
    );
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
    const ranked = rank([cpu('idle', 0, 0), cpu('half', 16, 64), cpu('nomem', 8, 127)], {
      kind: 'cpu',
      cpu: 8,
      memoryGiB: 32,
    });
    expect(ranked).toEqual(['half', 'idle']);
  });

  it('keeps only the best `limit` nodes, in order, and only the asked pool', () => {
    const nodes = [8, 3, 5, 2, 7, 2, 4].map((free, i) => node(`n${i}`, free));
    expect(rank(nodes, demand, null, 3)).toEqual(['n3', 'n5', 'n1']);
    const pooled = nodes.map((n, i) => (i % 2 ? { ...n, poolId: 'p' } : n));
    expect(rank(pooled, demand, 'p', 2)).toEqual(['n3', 'n5']);
    expect(rank(pooled, demand, null)).toEqual(['n3', 'n5', 'n1', 'n6', 'n2', 'n4', 'n0']);
  });

  it('counts free cards per model on a node with cards of several models', () => {
    const mixed = node('mixed', 8, {
      gpuModel: 'mixed',
      gpus: [
        { uuid: 'a', model: 'L40S', memoryGiB: 48, sessionId: null, owner: null },
        { uuid: 'b', model: 'L40S', memoryGiB: 48, sessionId: 's', owner: 'o' },
        { uuid: 'c', model: 'HPC_GPU', memoryGiB: 80, sessionId: null, owner: null },
        { uuid: 'd', model: 'HPC_GPU', memoryGiB: 80, sessionId: null, owner: null },
      ],
    });
    expect(fitOf(mixed).freeCards).toEqual({ L40S: 1, HPC_GPU: 2 });
    expect(rank([mixed], demand)).toEqual([]);
    expect(rank([mixed], { ...demand, gpuModel: 'HPC_GPU' })).toEqual(['mixed']);
  });
});

describe('FitList (the placement index order)', () => {
  const fitArb = (i: number) =>
    fc
      .record({
        free: fc.integer({ min: 0, max: 8 }),
        host: fc.constantFrom('a', 'b', 'c', 'd'),
        online: fc.boolean(),
        cordoned: fc.boolean(),
        pool: fc.constantFrom(null, 'p'),
        cpu: fc.integer({ min: 0, max: 64 }),
        mem: fc.integer({ min: 0, max: 256 }),
        role: fc.constantFrom('gpu' as const, 'cpu' as const),
      })
      .map((r): NodeFit => ({
        nodeId: `n${i}`,
        hostname: r.host,
        clusterId: 'c',
        poolId: r.pool,
        role: r.role,
        mode: 'shared',
        online: r.online,
        runningSessions: 0,
        cordoned: r.cordoned,
        draining: false,
        freeCards: { L40S: r.free },
        freeCpu: r.cpu,
        freeMemoryGiB: r.mem,
      }));
  const ops = fc.array(
    fc.oneof(
      fc.integer({ min: 0, max: 11 }).chain((i) => fitArb(i).map((fit) => ({ put: fit }))),
      fc.integer({ min: 0, max: 11 }).map((i) => ({ remove: `n${i}` })),
    ),
    { maxLength: 60 },
  );

  it('returns what ranking the whole set would, after any puts and removes', () => {
    fc.assert(
      fc.property(
        ops,
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(null, 'p'),
        fc.integer({ min: 1, max: 5 }),
        (steps, gpuCount, cpu, poolId, limit) => {
          const gpus = new FitList((n) => n.freeCards.L40S ?? 0);
          const cpus = new FitList((n) => n.freeCpu);
          const all = new Map<string, NodeFit>();
          for (const step of steps) {
            if ('put' in step) {
              all.set(step.put.nodeId, step.put);
              gpus.put(step.put);
              cpus.put(step.put);
            } else {
              all.delete(step.remove);
              gpus.remove(step.remove);
              cpus.remove(step.remove);
            }
          }
          const gpu = { kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount };
          const cpuDemand = { kind: 'cpu' as const, cpu, memoryGiB: 32 };
          // Same best-fit order; ties on hostname are ordered by node id in the list.
          const ids = (xs: NodeFit[]) => xs.map((n) => `${n.hostname}/${n.nodeId}`);
          const sorted = [...all.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
          expect(ids(gpus.best(gpu, poolId, limit))).toEqual(
            ids(rankByBestFit(sorted, gpu, poolId, limit)),
          );
          expect(ids(cpus.best(cpuDemand, poolId, limit))).toEqual(
            ids(rankByBestFit(sorted, cpuDemand, poolId, limit)),
          );
          expect(gpus.size).toBe(all.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});
