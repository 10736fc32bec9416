import { SessionDemand } from '../nodes';
import { PoolDefinition } from '../pools';

export type AutoscaleInput = {
  readonly pool: Pick<PoolDefinition, 'kind' | 'gpuType' | 'spec'> & {
    readonly autoscaling: { readonly min: number; readonly max: number };
  };
  readonly size: number;
  /** Demands of the sessions that fit this pool and have waited longer than its threshold. */
  readonly waiting: readonly SessionDemand[];
  /** Nodes of the pool idle longer than its cool-down. */
  readonly idleNodes: number;
};

export type AutoscaleDecision = { readonly desiredSize: number; readonly reason: string } | null;

/** Whether one node of the pool could ever hold this demand (else adding nodes cannot help). */
export const fitsOneNode = (
  pool: Pick<PoolDefinition, 'kind' | 'gpuType' | 'spec'>,
  demand: SessionDemand,
): boolean =>
  demand.kind === 'gpu'
    ? pool.kind === 'gpu' &&
      demand.gpuModel === pool.gpuType &&
      demand.gpuCount <= pool.spec.gpusPerNode
    : pool.kind === 'cpu' && demand.cpu <= pool.spec.cpu && demand.memoryGiB <= pool.spec.memoryGiB;

/** Nodes the waiting demands need (a lower bound: packing may need a few more next round). */
export const nodesNeeded = (
  pool: Pick<PoolDefinition, 'kind' | 'gpuType' | 'spec'>,
  waiting: readonly SessionDemand[],
): number => {
  let cards = 0;
  let cpu = 0;
  let memory = 0;
  for (const d of waiting) {
    if (d.kind === 'gpu') cards += d.gpuCount;
    else {
      cpu += d.cpu;
      memory += d.memoryGiB;
    }
  }
  if (pool.kind === 'gpu') return Math.ceil(cards / Math.max(1, pool.spec.gpusPerNode));
  return Math.max(Math.ceil(cpu / pool.spec.cpu), Math.ceil(memory / pool.spec.memoryGiB));
};

/**
 * The bounds alone: a pool above its max scales in to it (through the usual drains), one
 * below its min scales out to it; within them, nothing. What a PATCH of the bounds starts at
 * once, and what every tick checks first.
 */
export const boundsDecision = (
  size: number,
  bounds: { readonly min: number; readonly max: number },
): AutoscaleDecision => {
  if (size > bounds.max) {
    return {
      desiredSize: bounds.max,
      reason: `autoscale in: ${size} node(s), above the maximum of ${bounds.max}`,
    };
  }
  if (size < bounds.min) {
    return {
      desiredSize: bounds.min,
      reason: `autoscale out: ${size} node(s), below the minimum of ${bounds.min}`,
    };
  }
  return null;
};

/**
 * One autoscaler decision for a pool: first its bounds (out to min, in to max), then out by
 * what the long-waiting sessions need (up to max), else in by the long-idle nodes (down to
 * min), else nothing. Out wins: a pool with waiting sessions never shrinks within its bounds.
 */
export const autoscaleDecision = (input: AutoscaleInput): AutoscaleDecision => {
  const { pool, size, idleNodes } = input;
  const { min, max } = pool.autoscaling;
  const waiting = input.waiting.filter((d) => fitsOneNode(pool, d));
  const bounded = boundsDecision(size, { min, max });
  if (bounded && (bounded.desiredSize < size || waiting.length === 0)) return bounded;
  if (waiting.length > 0) {
    const target = Math.max(min, Math.min(max, size + nodesNeeded(pool, waiting)));
    if (target > size) {
      return {
        desiredSize: target,
        reason: `autoscale out: ${waiting.length} session(s) queued beyond the wait threshold need ${target - size} node(s)`,
      };
    }
    return null;
  }
  const target = Math.max(min, size - idleNodes);
  if (target < size) {
    return {
      desiredSize: target,
      reason: `autoscale in: ${size - target} node(s) idle beyond the cool-down`,
    };
  }
  return null;
};
