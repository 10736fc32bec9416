import { Workflow, assertNever } from '@fleet/kernel';
import { OperationCommand, OperationState, isFinished, stepOf } from './operation.decider';
import {
  POLL_MS,
  Running,
  again,
  complete,
  fail,
  poolOperationStep,
  start,
  succeed,
} from './pool-operation.steps';

/** Cluster steps take minutes; their transitions also wake the operation (the saga's react). */
export const CLUSTER_POLL_MS = 1000;

export type NodeRef = { readonly nodeId: string; readonly hostname: string };

/** What reaches the operation: its timers, a refusal met carrying a step out, its end. */
export type OperationInput =
  | { type: 'OperationStepDue'; data: { operationId: string; at: string } }
  | { type: 'OperationDeadlineDue'; data: { operationId: string; at: string } }
  /** A step's command was refused (a DomainError): the operation fails with it. */
  | { type: 'OperationStepRefused'; data: { operationId: string; error: string; at: string } }
  /** Its end was recorded (event `eventId`): the pool is freed, a failed deletion gives it back. */
  | {
      type: 'OperationEnded';
      data: {
        operationId: string;
        succeeded: boolean;
        at: string;
        eventId: string;
        correlationId: string;
      };
    };

/** A pool member as the choice of nodes sees it. */
export type Member = NodeRef & {
  readonly runningSessions: number;
  readonly capacity: { readonly cpu: number; readonly memoryGiB: number };
};

/** A node of a cluster being deleted, as the Nodes read model shows it (deleted ones are gone). */
export type ClusterNode = NodeRef & {
  readonly poolId: string | null;
  readonly online: boolean;
  readonly sessions: number;
};

/** What a cluster operation asks the provisioner for (OperationSnapshot.asked: `cluster <action>`). */
export type ClusterAction = 'create' | 'upgrade' | 'repair' | 'delete';

/** A chosen node as its stream says now: `gone` once deleted (or never seen). */
export type ChosenNode = {
  readonly status: 'online' | 'offline' | 'gone';
  readonly poolId: string | null;
  readonly hostname: string;
  readonly sessions: number;
};

/**
 * What a step decides on, read by the saga at each run: the operation; its pool's read model
 * (null while catching up) or its cluster's lifecycle; the members when nodes are to be chosen;
 * which new hostnames registered in the pool; the chosen nodes and the drains recorded; and
 * what this process already asked the provisioner (asked again after a restart: idempotent).
 */
export type OperationSnapshot = {
  readonly op: OperationState;
  readonly poolSeen: boolean;
  readonly clusterHistory: ReadonlyArray<{
    readonly from: string | null;
    readonly to: string;
    readonly at: string;
  }> | null;
  readonly members: readonly Member[] | null;
  readonly registered: ReadonlySet<string>;
  readonly nodes: Readonly<Record<string, ChosenNode>>;
  /** Each recorded drain's status in the Drains read model (absent: not there yet). */
  readonly drains: Readonly<Record<string, string>>;
  /** Provisioner requests made by this process: `removal <key>`, `create <hostname>`, `cluster <action>`. */
  readonly asked: ReadonlySet<string>;
  /** A cluster's deletion: its nodes and its pools not deleted yet (null when not read). */
  readonly clusterNodes: readonly ClusterNode[] | null;
  readonly clusterPools: readonly string[] | null;
  /** A cluster's deletion: its Cluster Mesh requests still live (the mesh slice takes them down). */
  readonly liveMeshes: number | null;
};

type Of<T extends OperationCommand['type']> = Extract<OperationCommand, { type: T }>;

/** Commands on the operation's stream, and what carrying a step out sets off elsewhere. */
export type OperationOutput =
  | Of<'StartOperationStep'>
  | Of<'CompleteOperationStep'>
  | Of<'ChooseOperationNodes'>
  | Of<'SucceedOperation'>
  | Of<'FailOperation'>
  | Of<'TimeOutOperation'>
  /** The provisioner creates these nodes, in the pool's shape or `shape` (a resize). */
  | { type: 'CreateNodes'; data: { hostnames: string[]; shape: Shape | null } }
  /** A drain by relocation, recorded on the operation with its id. */
  | { type: 'DrainNode'; data: { nodeId: string } }
  /** Each node marked for removal on its stream, then the provisioner asked to remove them. */
  | { type: 'RemoveNodes'; data: { key: string; nodes: NodeRef[] } }
  /** Through the node command path (refused while it holds sessions: looked at again). */
  | { type: 'DeleteNode'; data: { nodeId: string; at: string } }
  | { type: 'MarkPoolDeleted'; data: { at: string } }
  /** The provisioner asked to carry the cluster's lifecycle (once per process: idempotent). */
  | { type: 'AskProvisioner'; data: { action: ClusterAction } }
  /** A cluster's deletion: its pools marked deleted, then the cluster `deleted`. */
  | { type: 'MarkClusterPoolsDeleted'; data: { poolIds: string[]; at: string } }
  | { type: 'MarkClusterDeleted'; data: { at: string } }
  | { type: 'ChangePoolSpec'; data: Shape & { at: string } }
  | { type: 'AddPoolToCluster'; data: { clusterId: string; poolId: string; at: string } }
  | { type: 'EndPoolOperation'; data: { operationId: string; at: string } }
  | { type: 'CancelOperationDeadline'; data: { operationId: string } }
  /** Its deadline job again, and a step now (a deadline job that fired early). */
  | { type: 'ArmOperation'; data: { operationId: string; deadlineAt: string } }
  | { type: 'ScheduleOperationStep'; data: { delayMs: number } };

type Shape = { cpu: number; memoryGiB: number };
type Out = OperationOutput[];

/**
 * Cluster operations follow the lifecycle: a step per working status the cluster passes
 * through (provisioning, bootstrapping, upgrading, …), success once it is running, failure
 * once it failed (unless repairing a failed cluster, which starts there).
 */
const followCluster = (op: Running, s: OperationSnapshot, at: string): Out => {
  if (s.clusterHistory === null) return [again(CLUSTER_POLL_MS)];
  const since = Date.parse(op.requestedAt);
  const moves = s.clusterHistory.filter((h) => Date.parse(h.at) >= since);
  const repairing = op.operationType === 'repair_cluster';
  const outputs: Out = [];
  // One step per working status passed through, from its move to the next one.
  let open: string | null = null;
  const close = (at: string) => {
    if (open !== null) outputs.push(complete(open, null, at));
    open = null;
  };
  if (repairing) {
    outputs.push(...start(op, 'repair', op.requestedAt));
    open = 'repair';
  }
  for (const move of moves) {
    if (move.to === 'running') {
      close(move.at);
      return [...outputs, ...awaitNodes(op, s, move.at, at)];
    }
    if (move.to === 'failed' || move.to === 'deleting') {
      if (repairing && move.to === 'failed') continue; // a repair waits for a retry to succeed
      const error =
        move.to === 'failed'
          ? `cluster failed during ${move.from ?? 'an unknown step'}`
          : 'cluster is being deleted';
      return [...outputs, fail(error, move.at)];
    }
    if (repairing) continue;
    // Both idempotent: a step already started or completed stays as it is.
    close(move.at);
    outputs.push(...start(op, move.to, move.at));
    open = move.to;
  }
  return [...outputs, again(CLUSTER_POLL_MS)];
};

const ACTIONS: Partial<Record<Running['operationType'], ClusterAction>> = {
  create_cluster: 'create',
  upgrade_cluster: 'upgrade',
  repair_cluster: 'repair',
  delete_cluster: 'delete',
};

/** Operations another slice carries out and reports (tracked-operations.ts). */
const TRACKED: ReadonlyArray<Running['operationType']> = [
  'restore_cluster',
  'connect_mesh',
  'disconnect_mesh',
];

/** Asks the provisioner once per process (again after a restart), then follows the lifecycle. */
const clusterStep = (op: Running, s: OperationSnapshot, at: string): Out => {
  // Another slice carries it out and reports its steps: only its deadline is kept here.
  if (TRACKED.includes(op.operationType)) return [];
  if (s.clusterHistory === null) return [again(CLUSTER_POLL_MS)]; // the read model catches up
  if (op.operationType === 'delete_cluster') return deleteCluster(op, s, at);
  const action = ACTIONS[op.operationType];
  if (action && !s.asked.has(`cluster ${action}`))
    return [{ type: 'AskProvisioner', data: { action } }, again(0)];
  return followCluster(op, s, at);
};

/**
 * Running: a create (or the repair of a create that failed) with pools ends once every node
 * it asked for registered in its pool; without pools, at the move to running.
 */
const awaitNodes = (op: Running, s: OperationSnapshot, ranAt: string, at: string): Out => {
  const hostnames = (op.clusterPools ?? []).flatMap((p) => p.hostnames);
  if (hostnames.length === 0) return [succeed(ranAt)];
  const registered = hostnames.filter((h) => s.registered.has(h)).length;
  const started = start(op, 'await_nodes', ranAt);
  if (registered < hostnames.length) return [...started, again(POLL_MS)];
  const detail = `${registered} node(s) registered in their pools`;
  return [...started, complete('await_nodes', detail, at), succeed(at)];
};

/**
 * A cluster's deletion (it is `deleting` already): its meshes taken down (the mesh slice does
 * that on `deleting`; this waits), the provisioner takes every node down, each is deleted once
 * offline and empty, then its pools are marked deleted and it ends `deleted`. Each output is
 * idempotent, so a run repeated after a crash changes nothing.
 */
const deleteCluster = (op: Running, s: OperationSnapshot, at: string): Out => {
  const { clusterNodes: nodes, clusterPools: pools, liveMeshes } = s;
  if (nodes === null || pools === null || liveMeshes === null) return [again(CLUSTER_POLL_MS)];
  const meshes = stepOf(op, 'disconnect_meshes');
  if (!meshes) return [...start(op, 'disconnect_meshes', at), again(0)];
  if (meshes.status === 'running') {
    if (liveMeshes > 0) return [again(CLUSTER_POLL_MS)];
    return [complete('disconnect_meshes', 'no live mesh', at), again(0)];
  }
  const removing = stepOf(op, 'remove_nodes');
  if (!removing) return [...start(op, 'remove_nodes', at), again(0)];
  if (removing.status === 'running') {
    if (!s.asked.has('cluster delete'))
      return [{ type: 'AskProvisioner', data: { action: 'delete' } }, again(0)];
    if (nodes.length === 0) return [complete('remove_nodes', 'every node removed', at), again(0)];
    const gone = nodes.filter((n) => !n.online && n.sessions === 0);
    const deletes: Out = gone.map((n) => ({ type: 'DeleteNode', data: { nodeId: n.nodeId, at } }));
    return [...deletes, again(gone.length < nodes.length ? POLL_MS : 0)];
  }
  const poolIds = [...pools];
  return [
    ...start(op, 'delete_pools', at),
    { type: 'MarkClusterPoolsDeleted', data: { poolIds, at } },
    complete('delete_pools', `${poolIds.length} pool(s) deleted`, at),
    { type: 'MarkClusterDeleted', data: { at } },
    succeed(at),
  ];
};

/** The next thing a step does; each step re-reads the operation, so one move per step suffices. */
const step = (op: Running, s: OperationSnapshot, at: string): Out => {
  if (op.poolId === null) return clusterStep(op, s, at);
  if (!s.poolSeen) return [again(POLL_MS)]; // the pool's read model is catching up
  return poolOperationStep(op, s, at);
};

/** The pool's side of an operation's end: freed, and given back to its cluster if a deletion failed. */
const ended = (
  op: OperationState,
  data: Extract<OperationInput, { type: 'OperationEnded' }>['data'],
): Out => {
  if (op.status === 'absent' || op.poolId === null) return [];
  const { operationId, clusterId, poolId } = op;
  const restore: Out =
    op.operationType === 'delete_node_pool' && !data.succeeded
      ? [{ type: 'AddPoolToCluster', data: { clusterId, poolId, at: data.at } }]
      : [];
  return [
    ...restore,
    { type: 'EndPoolOperation', data: { operationId, at: data.at } },
    { type: 'CancelOperationDeadline', data: { operationId } },
  ];
};

/**
 * The operations saga as a workflow. Its state is the operation's stream and what the saga
 * reads for it at each run (OperationSnapshot), not folded from its inputs.
 */
export const operationWorkflow: Workflow<OperationInput, OperationOutput, OperationSnapshot> = {
  decide: (input, s) => {
    if (input.type === 'OperationEnded') return ended(s.op, input.data);
    const op = s.op;
    if (op.status === 'absent' || isFinished(op.status)) return [];
    switch (input.type) {
      case 'OperationStepDue':
        return step(op, s, input.data.at);
      case 'OperationStepRefused':
        return [fail(input.data.error, input.data.at)];
      case 'OperationDeadlineDue': {
        const { at } = input.data;
        const { operationId, deadlineAt } = op;
        // Fired before the deadline (a clock ahead): the decider ignores it, and it is re-armed.
        return [
          { type: 'TimeOutOperation', data: { at } },
          ...(Date.parse(deadlineAt) > Date.parse(at)
            ? [{ type: 'ArmOperation', data: { operationId, deadlineAt } } as const]
            : []),
        ];
      }
      default:
        return assertNever(input, 'operation input');
    }
  },
  evolve: (snapshot) => snapshot,
  initialState: () => ({
    op: { status: 'absent' },
    poolSeen: false,
    clusterHistory: null,
    members: null,
    registered: new Set(),
    nodes: {},
    drains: {},
    asked: new Set(),
    clusterNodes: null,
    clusterPools: null,
    liveMeshes: null,
  }),
};
