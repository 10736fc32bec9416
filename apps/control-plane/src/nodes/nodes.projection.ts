import { StoredEvent } from '@fleet/eventstore/port';
import { Projection } from '@fleet/cqrs';
import { assertNever } from '@fleet/kernel';
import {
  Allocation,
  Capacity,
  NodeEvent,
  NodeMode,
  NodeRole,
  OfflineReason,
  nodeCodec,
} from './node.events';
import { PROVISIONER_LABEL } from './node-labels';

export const NODES = 'nodes';
/** Deleted nodes' last revisions, so a redelivered old event cannot resurrect a deleted node. */
export const NODE_TOMBSTONES = 'node_tombstones';

export type NodeGpuView = {
  uuid: string;
  model: string;
  memoryGiB: number;
  sessionId: string | null;
  owner: string | null;
};

export type NodeDoc = {
  _id: string;
  _rev: number;
  nodeId: string;
  clusterId: string;
  hostname: string;
  role: NodeRole;
  poolId: string | null;
  mode: NodeMode;
  labels: Record<string, string>;
  /**
   * The provisioner that made the node (its `fleet/provisioner` label), null for one an
   * operator brought. Indexed: the simulated provisioner finds its nodes every few seconds
   * without testing every node of the fleet (which held the event loop: docs/PERFORMANCE.md).
   */
  provisioner: string | null;
  status: 'ready' | 'busy' | 'cordoned' | 'offline';
  online: boolean;
  offlineReason: OfflineReason | null;
  gpuCount: number;
  runningSessions: number;
  /** Placement helpers: the model of the node's cards (`mixed` when several, null when none), free cards, free vCPU and memory. */
  gpuModel: string | null;
  freeCards: number;
  freeCpu: number;
  freeMemoryGiB: number;
  capacity: Capacity;
  gpus: NodeGpuView[];
  /**
   * Cards the node stopped listing while a session held them: still that session's until it
   * ends (the command side keeps them too), so `GET /v1/nodes/{id}/gpus` still shows who holds
   * them. Not counted in `gpuCount`. Absent from documents projected before it was kept.
   */
  unlisted?: NodeGpuView[];
  allocations: Record<string, Allocation>;
  cordon: { desired: boolean; observed: boolean | null; reason: string | null };
  /**
   * Kubernetes last said what is desired (`cordon.observed === cordon.desired`). Indexed: the
   * cordon-sync reconciler reads the few nodes without it, instead of testing every node of
   * the fleet every few seconds (which held the event loop: docs/PERFORMANCE.md).
   */
  cordonSynced: boolean;
  drain: { drainId: string; status: 'running' | 'completed' } | null;
  registeredAt: string;
  /** Receive time of the last report that changed something (heartbeats live elsewhere). */
  changedAt: string;
  /**
   * The removal a pool operation asked for (its deadline `until`): the mass-failure guard
   * leaves the node out meanwhile. Absent when none was, and from documents projected before
   * it was kept.
   */
  removal?: { operationId: string; until: string };
};

/**
 * Each card with the session holding it. Cards whose holder did not change stay the same
 * objects, and so does the list when none changed: the read-model store then keeps them as
 * they are instead of copying every card of the node on each allocation.
 */
const cardViews = (gpus: NodeGpuView[], held: ReadonlyMap<string, Allocation>): NodeGpuView[] => {
  let out: NodeGpuView[] | undefined;
  for (let i = 0; i < gpus.length; i++) {
    const g = gpus[i];
    const a = held.get(g.uuid);
    const sessionId = a?.sessionId ?? null;
    const owner = a?.owner ?? null;
    if (g.sessionId === sessionId && g.owner === owner) continue;
    out ??= gpus.slice();
    out[i] = { ...g, sessionId, owner };
  }
  return out ?? gpus;
};

const withStatus = (doc: NodeDoc): NodeDoc => {
  const runningSessions = Object.keys(doc.allocations).length;
  const held = new Map<string, Allocation>();
  for (const a of Object.values(doc.allocations)) for (const g of a.gpus) held.set(g, a);
  const models = new Set(doc.gpus.map((g) => g.model));
  const allocations = Object.values(doc.allocations);
  return {
    ...doc,
    runningSessions,
    gpuModel: models.size === 0 ? null : models.size === 1 ? [...models][0] : 'mixed',
    freeCards: doc.gpus.filter((g) => !held.has(g.uuid)).length,
    freeCpu: doc.capacity.cpu - allocations.reduce((sum, a) => sum + a.cpu, 0),
    freeMemoryGiB: doc.capacity.memoryGiB - allocations.reduce((sum, a) => sum + a.memoryGiB, 0),
    gpuCount: doc.gpus.length,
    gpus: cardViews(doc.gpus, held),
    unlisted:
      doc.unlisted && doc.unlisted.length > 0
        ? cardViews(
            doc.unlisted.filter((g) => held.has(g.uuid)),
            held,
          )
        : doc.unlisted,
    cordonSynced: doc.cordon.observed === doc.cordon.desired,
    provisioner: Object.hasOwn(doc.labels, PROVISIONER_LABEL)
      ? doc.labels[PROVISIONER_LABEL]
      : null,
    status: !doc.online
      ? 'offline'
      : doc.cordon.desired
        ? 'cordoned'
        : runningSessions > 0
          ? 'busy'
          : 'ready',
  };
};

/** A registered node's first document. */
const registeredDoc = (
  d: Extract<NodeEvent, { type: 'NodeRegistered' }>['data'],
  revision: number,
): NodeDoc =>
  withStatus({
    _id: d.nodeId,
    _rev: revision,
    nodeId: d.nodeId,
    clusterId: d.clusterId,
    hostname: d.hostname,
    role: d.role,
    poolId: null,
    mode: d.mode,
    labels: { ...d.labels },
    provisioner: null,
    status: 'ready',
    online: d.kubeletReady,
    offlineReason: d.kubeletReady ? null : 'kubelet_not_ready',
    gpuCount: 0,
    runningSessions: 0,
    gpuModel: null,
    freeCards: 0,
    freeCpu: 0,
    freeMemoryGiB: 0,
    capacity: d.capacity,
    gpus: d.gpus.map((g) => ({ ...g, sessionId: null, owner: null })),
    allocations: {},
    cordon: { desired: false, observed: d.unschedulable, reason: null },
    cordonSynced: false,
    drain: null,
    registeredAt: d.registeredAt,
    changedAt: d.registeredAt,
  });

/** The listed and the unlisted cards after a change of cards. */
const gpusAfter = (
  doc: NodeDoc,
  change: Extract<NodeEvent, { type: 'NodeGpusChanged' }>['data'],
): Pick<NodeDoc, 'gpus' | 'unlisted'> => {
  const removed = new Set(change.removed);
  const added = new Set(change.added.map((g) => g.uuid));
  const gpus = [
    ...doc.gpus.filter((g) => !removed.has(g.uuid)),
    ...change.added.map((g) => ({ ...g, sessionId: null, owner: null })),
  ];
  // A card dropped while held is kept aside until its session ends; listed again, it is
  // the node's again. One removed and added at once changed its model or memory: listed.
  const unlisted = [
    ...(doc.unlisted ?? []).filter((g) => !added.has(g.uuid)),
    ...doc.gpus.filter((g) => removed.has(g.uuid) && !added.has(g.uuid) && g.sessionId !== null),
  ];
  return { gpus, unlisted };
};

/** The Nodes screen's document after one event: pure; null deletes it. */
export const projectNode = (
  doc: NodeDoc | null,
  event: NodeEvent,
  revision: number,
): NodeDoc | null => {
  if (event.type === 'NodeRegistered') return registeredDoc(event.data, revision);
  if (doc === null) return null;
  const next = (patch: Partial<NodeDoc>): NodeDoc =>
    withStatus({ ...doc, ...patch, _rev: revision });
  switch (event.type) {
    case 'NodeInventoryChanged': {
      const { nodeId: _n, observedAt: _o, at, ...changed } = event.data;
      return next({
        ...changed,
        labels: changed.labels ? { ...changed.labels } : doc.labels,
        changedAt: at,
      });
    }
    case 'NodeGpusChanged':
      return next({ ...gpusAfter(doc, event.data), changedAt: event.data.at });
    case 'NodeUnschedulableObserved':
      return next({
        cordon: { ...doc.cordon, observed: event.data.unschedulable },
        changedAt: event.data.at,
      });
    case 'NodeReadinessObserved':
      return next({
        offlineReason:
          doc.online || event.data.kubeletReady ? doc.offlineReason : 'kubelet_not_ready',
        changedAt: event.data.at,
      });
    case 'NodeWentOffline':
      return next({ online: false, offlineReason: event.data.reason });
    case 'NodeCameOnline':
      return next({ online: true, offlineReason: null, changedAt: event.data.at });
    case 'NodeCordoned':
      return next({ cordon: { ...doc.cordon, desired: true, reason: event.data.reason } });
    case 'NodeUncordoned':
      return next({ cordon: { ...doc.cordon, desired: false, reason: null } });
    case 'NodeCordonSyncWentOverdue':
      return next({}); // a notification only; the screen already shows desired vs observed
    case 'NodeDeleted':
      return null;
    case 'NodeAssignedToPool':
      return next({ poolId: event.data.poolId });
    case 'NodeCapacityAllocated': {
      const { nodeId: _n, at: _a, ...allocation } = event.data;
      return next({ allocations: { ...doc.allocations, [allocation.sessionId]: allocation } });
    }
    case 'NodeCapacityReleased': {
      const { [event.data.sessionId]: _gone, ...allocations } = doc.allocations;
      return next({ allocations });
    }
    case 'NodeDrainStarted':
      return next({ drain: { drainId: event.data.drainId, status: 'running' } });
    case 'NodeRemovalRequested':
      // The screen shows it cordoned, as it already is; the guard reads the removal.
      return next({
        removal: { operationId: event.data.operationId, until: event.data.until },
      });
    case 'NodeDrainEnded':
      return next({
        drain:
          doc.drain?.drainId === event.data.drainId
            ? { drainId: event.data.drainId, status: 'completed' }
            : doc.drain,
      });
    default:
      return assertNever(event, 'node event');
  }
};

export const nodesProjection: Projection = {
  name: 'nodes',
  collections: [
    {
      name: NODES,
      indexes: [
        'clusterId',
        'status',
        'gpuModel',
        'online',
        'cordonSynced',
        'provisioner',
        // The sorts (MongoDB): GET /v1/nodes by cluster and hostname, over the fleet or one
        // cluster (a cluster's node directives too), or filtered by status or pool; a pool's
        // members by hostname.
        { clusterId: 1, hostname: 1, _id: 1 },
        { status: 1, clusterId: 1, hostname: 1, _id: 1 },
        { poolId: 1, clusterId: 1, hostname: 1, _id: 1 },
        { poolId: 1, hostname: 1, _id: 1 },
      ],
    },
    { name: NODE_TOMBSTONES },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (!event) return;
    const nodeId = stored.streamId.slice('node-'.length);
    const doc = await writer.get<NodeDoc>(NODES, nodeId);
    // Guarded by stream revision: redelivered events change nothing.
    if (doc && stored.revision <= doc._rev) return;
    if (!doc) {
      const tomb = await writer.get<{ _id: string; _rev: number }>(NODE_TOMBSTONES, nodeId);
      if (tomb && stored.revision <= tomb._rev) return;
    }
    const next = projectNode(doc, event, stored.revision);
    if (next) writer.upsert(NODES, next);
    else if (doc) {
      writer.delete(NODES, nodeId);
      writer.upsert(NODE_TOMBSTONES, { _id: nodeId, _rev: stored.revision });
    }
  },
};
