import { OperationState, stepOf } from './operation.decider';
import type { Member, NodeRef, OperationOutput, OperationSnapshot } from './operation.workflow';

/**
 * The pool operations' steps (scale, delete, resize), pure: each returns what the next run of
 * the operation does, ending with when to look again (none once it ended).
 */

/** How often a waiting step looks again (nodes registering, drains finishing, nodes going). */
export const POLL_MS = 250;

export type Running = Extract<OperationState, { operationId: string }>;
type Out = OperationOutput[];

export const again = (delayMs: number): OperationOutput => ({
  type: 'ScheduleOperationStep',
  data: { delayMs },
});
export const succeed = (at: string): OperationOutput => ({
  type: 'SucceedOperation',
  data: { at },
});
export const fail = (error: string, at: string): OperationOutput => ({
  type: 'FailOperation',
  data: { error, at },
});
export const complete = (name: string, detail: string | null, at: string): OperationOutput => ({
  type: 'CompleteOperationStep',
  data: { name, detail, at },
});
/** Starts the step unless it was (in any state); a step already there is left as it is. */
export const start = (op: Running, name: string, at: string): Out =>
  stepOf(op, name) ? [] : [{ type: 'StartOperationStep', data: { name, at } }];

/** Scale-in order: idle nodes first, then those with the fewest sessions; newest names first on a tie. */
export const chooseNodesToRemove = (
  nodes: ReadonlyArray<Pick<Member, 'nodeId' | 'hostname' | 'runningSessions'>>,
  count: number,
): Array<{ nodeId: string; hostname: string }> =>
  [...nodes]
    .sort(
      (a, b) =>
        a.runningSessions - b.runningSessions ||
        (a.hostname < b.hostname ? 1 : a.hostname > b.hostname ? -1 : 0),
    )
    .slice(0, Math.max(0, count))
    .map(({ nodeId, hostname }) => ({ nodeId, hostname }));

/** Whether the next step chooses nodes (scale-in, deletion, resize), so the saga reads the members. */
export const choosesNodes = (op: OperationState): boolean =>
  op.status !== 'absent' &&
  op.chosen === null &&
  (op.operationType === 'delete_node_pool' ||
    op.operationType === 'resize_node_pool' ||
    (op.operationType === 'scale_node_pool' && (op.desiredSize ?? 0) < (op.fromSize ?? 0)));

/** Scale-out: ask for the nodes once, then wait until every one registered in the pool. */
const scaleOut = (op: Running, s: OperationSnapshot, at: string): Out => {
  const requested = stepOf(op, 'request_nodes');
  if (!requested) return [...start(op, 'request_nodes', at), again(0)];
  if (requested.status === 'running') {
    return [
      { type: 'CreateNodes', data: { hostnames: [...op.addHostnames], shape: null } },
      complete('request_nodes', `${op.addHostnames.length} node(s) requested`, at),
      again(0),
    ];
  }
  if (!stepOf(op, 'await_registration')) return [...start(op, 'await_registration', at), again(0)];
  const registered = op.addHostnames.filter((h) => s.registered.has(h)).length;
  if (registered < op.addHostnames.length) return [again(POLL_MS)];
  return [
    complete('await_registration', `${registered} node(s) registered in the pool`, at),
    succeed(at),
  ];
};

/**
 * Drains each node by relocation (once per node). `left`: drains still running; a node an
 * admin moved to another pool since it was chosen fails the operation (it is that pool's now).
 */
const drainAll = (
  op: Running,
  s: OperationSnapshot,
  nodes: readonly NodeRef[],
  at: string,
): Work => {
  const outputs: Out = [];
  let pending = 0;
  for (const { nodeId } of nodes) {
    const node = s.nodes[nodeId];
    if (!node || node.status === 'gone') continue;
    const drainId = op.drains[nodeId];
    if (drainId) {
      if (s.drains[drainId] !== 'completed') pending++;
      continue;
    }
    if (node.status === 'offline' && node.sessions === 0) continue;
    if (node.poolId !== op.poolId) {
      const error = `node_in_use: node ${node.hostname} was moved to another pool since it was chosen: not drained`;
      return { outputs: [...outputs, fail(error, at)], left: pending, failed: true };
    }
    outputs.push({ type: 'DrainNode', data: { nodeId } });
    pending++;
  }
  return { outputs, left: pending };
};

/**
 * Asks for the removal once per process (then looks again at once: the nodes may be offline
 * already); deletes each node once offline and empty. `left`: nodes still online or holding
 * sessions (being ended: node_offline).
 */
const removeAll = (
  s: OperationSnapshot,
  nodes: readonly NodeRef[],
  key: string,
  at: string,
): Work => {
  if (!s.asked.has(`removal ${key}`))
    return {
      outputs: [{ type: 'RemoveNodes', data: { key, nodes: [...nodes] } }],
      left: 1,
      soon: true,
    };
  const outputs: Out = [];
  let left = 0;
  for (const { nodeId } of nodes) {
    const node = s.nodes[nodeId];
    if (node?.status === 'online' || (node?.status === 'offline' && node.sessions > 0)) left++;
    else if (node?.status === 'offline') outputs.push({ type: 'DeleteNode', data: { nodeId, at } });
  }
  // Deleted: gone at the next look, which completes the step (or finds one refused, busy).
  if (left === 0 && outputs.length > 0) return { outputs, left: 1, soon: true };
  return { outputs, left };
};

/** What a phase found: outputs, how many nodes it still waits for, whether to look at once. */
type Work = { outputs: Out; left: number; failed?: boolean; soon?: boolean };

/** A step driven by `work`: started, then completed once nothing is left, looked at again else. */
const phase = (op: Running, name: string, detail: string | null, at: string, work: Work): Out => {
  const started = start(op, name, at);
  if (work.failed) return [...started, ...work.outputs];
  if (work.left > 0) return [...started, ...work.outputs, again(work.soon ? 0 : POLL_MS)];
  return [...started, ...work.outputs, complete(name, detail, at), again(0)];
};

/** Scale-in and deletion: choose the nodes (all for a deletion), drain, remove, delete each. */
const shrink = (op: Running, s: OperationSnapshot, deletePool: boolean, at: string): Out => {
  const chosen = op.chosen;
  if (chosen === null) {
    const members = s.members ?? [];
    const count = deletePool ? members.length : members.length - (op.desiredSize ?? 0);
    const nodes = chooseNodesToRemove(members, count);
    return choose(op, nodes, at);
  }
  if (stepOf(op, 'drain_nodes')?.status !== 'succeeded') {
    const work = drainAll(op, s, chosen, at);
    return phase(op, 'drain_nodes', `${chosen.length} node(s) drained`, at, work);
  }
  if (stepOf(op, 'remove_nodes')?.status !== 'succeeded') {
    const work = removeAll(s, chosen, 'all', at);
    return phase(op, 'remove_nodes', `${chosen.length} node(s) removed`, at, work);
  }
  const deletion: Out = deletePool
    ? [
        ...start(op, 'delete_pool', at),
        { type: 'MarkPoolDeleted', data: { at } },
        complete('delete_pool', null, at),
      ]
    : [];
  return [...deletion, succeed(at)];
};

const choose = (op: Running, nodes: NodeRef[], at: string): Out => [
  ...start(op, 'choose_nodes', at),
  { type: 'ChooseOperationNodes', data: { nodes, at } },
  complete('choose_nodes', nodes.map((n) => n.hostname).join(', ') || 'none', at),
  again(0),
];

/**
 * Resize by rolling replacement, one node at a time: add a node of the new shape and wait for
 * it in the pool, drain the old one by relocation, remove it; then the pool's shape.
 */
const resize = (op: Running, s: OperationSnapshot, at: string): Out => {
  const to = op.resizeTo;
  if (!to) return [fail('resize without a target shape', at)];
  if (op.chosen === null) {
    const old = (s.members ?? []).filter(
      (m) => m.capacity.cpu !== to.cpu || m.capacity.memoryGiB !== to.memoryGiB,
    );
    return choose(op, chooseNodesToRemove(old, old.length).slice(0, op.addHostnames.length), at);
  }
  for (const [i, old] of op.chosen.entries()) {
    const hostname = op.addHostnames[i];
    const add = `add_node ${hostname}`;
    if (stepOf(op, add)?.status !== 'succeeded') {
      if (!stepOf(op, add)) return [...start(op, add, at), again(0)];
      if (!s.asked.has(`create ${hostname}`)) {
        // Asked now: whether it registered is read at the next look.
        const shape = { cpu: to.cpu, memoryGiB: to.memoryGiB };
        return [{ type: 'CreateNodes', data: { hostnames: [hostname], shape } }, again(0)];
      }
      if (!s.registered.has(hostname)) return [again(POLL_MS)];
      const detail = `${hostname} registered with ${to.cpu} vCPU / ${to.memoryGiB} GiB`;
      return [complete(add, detail, at), again(0)];
    }
    const drain = `drain_node ${old.hostname}`;
    if (stepOf(op, drain)?.status !== 'succeeded') {
      if (!stepOf(op, drain)) return [...start(op, drain, at), again(0)];
      return phase(op, drain, null, at, drainAll(op, s, [old], at));
    }
    const remove = `remove_node ${old.hostname}`;
    if (stepOf(op, remove)?.status !== 'succeeded') {
      if (!stepOf(op, remove)) return [...start(op, remove, at), again(0)];
      return phase(op, remove, null, at, removeAll(s, [old], old.nodeId, at));
    }
  }
  return [
    ...start(op, 'update_spec', at),
    { type: 'ChangePoolSpec', data: { cpu: to.cpu, memoryGiB: to.memoryGiB, at } },
    complete('update_spec', `${to.cpu} vCPU / ${to.memoryGiB} GiB`, at),
    succeed(at),
  ];
};

/** A pool operation's next move (its pool's read model is there). */
export const poolOperationStep = (op: Running, s: OperationSnapshot, at: string): Out => {
  switch (op.operationType) {
    case 'scale_node_pool': {
      const grow = (op.desiredSize ?? 0) - (op.fromSize ?? 0);
      if (grow > 0) return scaleOut(op, s, at);
      if (grow < 0) return shrink(op, s, false, at);
      return [
        ...start(op, 'nothing_to_do', at),
        complete('nothing_to_do', `pool already has ${op.desiredSize} node(s)`, at),
        succeed(at),
      ];
    }
    case 'delete_node_pool':
      return shrink(op, s, true, at);
    case 'resize_node_pool':
      return resize(op, s, at);
    default:
      return [fail(`${op.operationType} is not supported yet`, at)];
  }
};
