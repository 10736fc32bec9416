import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { K8sVersion, isOneMinorForward } from '../config/k8s-versions';
import { ClusterEvent, ClusterStatus, VeleroSettings, clusterCodec } from './cluster.events';

export type ClusterCommand =
  | {
      type: 'RequestCluster';
      data: {
        clusterId: string;
        name: string;
        k8sVersion: string;
        podCidr: string;
        serviceCidr: string;
        velero?: VeleroSettings | null;
        at: string;
      };
    }
  | { type: 'AdoptCluster'; data: { clusterId: string; seenNodeId: string; at: string } }
  | {
      type: 'TransitionCluster';
      data: {
        clusterId: string;
        to: ClusterStatus;
        reason: string | null;
        k8sVersion?: string | null;
        apiEndpoint?: string | null;
        caCertificate?: string | null;
        at: string;
      };
    }
  /**
   * An upgrade: unlike a reported step, asking it again is not "already there". `catalog` is
   * K8S_VERSIONS as configured when asked (the decider reads no settings).
   */
  | {
      type: 'UpgradeCluster';
      data: { clusterId: string; k8sVersion: string; catalog: readonly K8sVersion[]; at: string };
    }
  /** `runningSessions` on the cluster's nodes as read when asked: any refuses (cluster_in_use). */
  | { type: 'DeleteCluster'; data: { clusterId: string; runningSessions: number; at: string } }
  | { type: 'AddPoolToCluster'; data: { clusterId: string; poolId: string; at: string } }
  | { type: 'RemovePoolFromCluster'; data: { clusterId: string; poolId: string; at: string } }
  | {
      type: 'SetClusterNetwork';
      data: { clusterId: string; podCidr: string; serviceCidr: string; at: string };
    };

export type ClusterFacts = {
  readonly clusterId: string;
  readonly name: string | null;
  readonly k8sVersion: string | null;
  readonly podCidr: string | null;
  readonly serviceCidr: string | null;
  readonly adopted: boolean;
  readonly pools: readonly string[];
  /** The step a failed cluster failed in: retrying goes back to it. */
  readonly failedFrom: ClusterStatus | null;
  /** While upgrading: the version it upgrades to. */
  readonly targetVersion: string | null;
  /** As the provisioner reported them on → running (null before, and for adopted clusters). */
  readonly apiEndpoint: string | null;
  readonly caCertificate: string | null;
  readonly velero: VeleroSettings | null;
};

export type ClusterState =
  { readonly status: 'absent' } | ({ readonly status: ClusterStatus } & ClusterFacts);

/** Orders Kubernetes versions (`1.30`, `v1.30.4`); a missing patch is 0. */
export const compareVersions = (a: string, b: string): number => {
  const parts = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
};

/** Every move the lifecycle allows besides `→ failed` (from any step but failed itself). */
const NEXT: Readonly<Record<ClusterStatus, readonly ClusterStatus[]>> = {
  requested: ['provisioning', 'deleting'],
  provisioning: ['bootstrapping', 'deleting'],
  bootstrapping: ['running', 'deleting'],
  running: ['degraded', 'upgrading', 'deleting'],
  degraded: ['running', 'deleting'],
  upgrading: ['running', 'deleting'],
  deleting: ['deleted'],
  deleted: [],
  failed: ['deleting'],
};

/** Whether `to` may follow `state` (failed retries the step it failed in). */
export const mayTransition = (
  state: Extract<ClusterState, { failedFrom: unknown }>,
  to: ClusterStatus,
): boolean => {
  if (to === 'failed') return state.status !== 'failed' && state.status !== 'deleted';
  if (state.status === 'failed') return to === state.failedFrom || NEXT.failed.includes(to);
  return NEXT[state.status].includes(to);
};

/** The cluster a command or event needs; `id` names it when there is none (404). */
const existing = (state: ClusterState, id: string): Extract<ClusterState, { pools: unknown }> => {
  if (state.status === 'absent') throw notFound('cluster', id);
  return state;
};

type Existing = Extract<ClusterState, { pools: unknown }>;
type DataOf<T extends ClusterCommand['type']> = Extract<ClusterCommand, { type: T }>['data'];

/** A reported step (the provisioner's, or an admin's); on → running it may carry the endpoint and CA. */
const transition = (cluster: Existing, data: DataOf<'TransitionCluster'>): ClusterEvent[] => {
  const { to, reason, at, apiEndpoint, caCertificate } = data;
  if (cluster.status === to) return []; // reported twice: already there
  if (!mayTransition(cluster, to))
    throw invalidTransition('cluster', cluster.status, `go to ${to}`);
  const version = to === 'upgrading' && data.k8sVersion ? { k8sVersion: data.k8sVersion } : {};
  const endpoint = {
    ...(apiEndpoint ? { apiEndpoint } : {}),
    ...(caCertificate ? { caCertificate } : {}),
  };
  const { clusterId, status: from } = cluster;
  return [
    {
      type: 'ClusterTransitioned',
      data: { clusterId, from, to, reason, ...version, ...endpoint, at },
    },
  ];
};

/**
 * An upgrade under way is refused whatever its version: taken as a repeat, a second upgrade
 * was answered 202 with an operation that "succeeded" at the first's version. Kubernetes
 * supports a skew of one minor: anything else (the same, older, two ahead, or not in the
 * catalog) is version_skew.
 */
const upgrade = (cluster: Existing, data: DataOf<'UpgradeCluster'>): ClusterEvent[] => {
  if (cluster.status === 'upgrading' || !mayTransition(cluster, 'upgrading')) {
    throw invalidTransition('cluster', cluster.status, 'be upgraded');
  }
  const { k8sVersion, catalog, at } = data;
  if (!isOneMinorForward(catalog, cluster.k8sVersion, k8sVersion)) {
    const runs = cluster.k8sVersion ?? 'an unknown version';
    const listed = catalog.map((v) => v.version).join(', ');
    throw new DomainError(
      'version_skew',
      `cluster ${cluster.clusterId} runs ${runs}: ${k8sVersion} is not one minor forward within ${listed}`,
      'conflict',
      { clusterId: cluster.clusterId, k8sVersion: cluster.k8sVersion, requested: k8sVersion },
    );
  }
  const { clusterId, status: from } = cluster;
  return [
    {
      type: 'ClusterTransitioned',
      data: {
        clusterId,
        from,
        to: 'upgrading',
        reason: `upgrade to ${k8sVersion}`,
        k8sVersion,
        at,
      },
    },
  ];
};

/**
 * Delete: deleting at once unless sessions run on its nodes (cluster_in_use); asked again while
 * deleting, nothing new (the running operation answers); a deleted cluster is gone for good.
 */
const deleteCluster = (
  cluster: Existing,
  { runningSessions, at }: DataOf<'DeleteCluster'>,
): ClusterEvent[] => {
  if (cluster.status === 'deleting') return [];
  if (!mayTransition(cluster, 'deleting'))
    throw invalidTransition('cluster', cluster.status, 'be deleted');
  if (runningSessions > 0) {
    throw new DomainError(
      'cluster_in_use',
      `cluster ${cluster.clusterId} has ${runningSessions} running session(s) on its nodes`,
      'conflict',
      { clusterId: cluster.clusterId, runningSessions },
    );
  }
  const { clusterId, status: from } = cluster;
  return [
    {
      type: 'ClusterTransitioned',
      data: { clusterId, from, to: 'deleting', reason: 'delete requested', at },
    },
  ];
};

export const decideCluster = (command: ClusterCommand, state: ClusterState): ClusterEvent[] => {
  switch (command.type) {
    case 'RequestCluster':
      // The id derives from the command (Idempotency-Key): a repeat creates nothing new.
      if (state.status !== 'absent') return [];
      return [{ type: 'ClusterRequested', data: command.data }];
    case 'AdoptCluster':
      if (state.status !== 'absent') return [];
      return [{ type: 'ClusterAdopted', data: command.data }];
    case 'TransitionCluster':
      return transition(existing(state, command.data.clusterId), command.data);
    case 'DeleteCluster':
      return deleteCluster(existing(state, command.data.clusterId), command.data);
    case 'UpgradeCluster':
      return upgrade(existing(state, command.data.clusterId), command.data);
    case 'AddPoolToCluster': {
      const cluster = existing(state, command.data.clusterId);
      if (cluster.pools.includes(command.data.poolId)) return [];
      if (cluster.status === 'deleting' || cluster.status === 'deleted') {
        throw invalidTransition('cluster', cluster.status, 'take a new node pool');
      }
      const { poolId, at } = command.data;
      return [{ type: 'ClusterPoolAdded', data: { clusterId: cluster.clusterId, poolId, at } }];
    }
    case 'RemovePoolFromCluster': {
      const cluster = existing(state, command.data.clusterId);
      if (!cluster.pools.includes(command.data.poolId)) return [];
      const leaving = cluster.status === 'deleting' || cluster.status === 'deleted';
      if (cluster.pools.length === 1 && !leaving) {
        throw new DomainError(
          'last_pool',
          `pool ${command.data.poolId} is the last node pool of cluster ${cluster.clusterId}`,
          'conflict',
          { clusterId: cluster.clusterId, poolId: command.data.poolId },
        );
      }
      const { poolId, at } = command.data;
      return [{ type: 'ClusterPoolRemoved', data: { clusterId: cluster.clusterId, poolId, at } }];
    }
    case 'SetClusterNetwork': {
      const cluster = existing(state, command.data.clusterId);
      const { podCidr, serviceCidr } = command.data;
      if (cluster.status === 'deleted') {
        throw invalidTransition('cluster', cluster.status, 'take a network');
      }
      if (cluster.podCidr === podCidr && cluster.serviceCidr === serviceCidr) return [];
      return [{ type: 'ClusterNetworkSet', data: command.data }];
    }
    default:
      return assertNever(command, 'cluster command');
  }
};

/**
 * The versions after a move, for the state and the read model alike: the target is kept
 * through `failed` and its retry back to `upgrading` (a retry's move names no version), and
 * becomes the version once the upgrade reaches `running`.
 */
export const versionsAfter = (
  cluster: { readonly k8sVersion: string | null; readonly targetVersion: string | null },
  move: Pick<
    Extract<ClusterEvent, { type: 'ClusterTransitioned' }>['data'],
    'from' | 'to' | 'k8sVersion'
  >,
): { k8sVersion: string | null; targetVersion: string | null } => {
  const { from, to } = move;
  return {
    k8sVersion:
      from === 'upgrading' && to === 'running'
        ? (cluster.targetVersion ?? cluster.k8sVersion)
        : cluster.k8sVersion,
    targetVersion:
      to === 'upgrading'
        ? (move.k8sVersion ?? (from === 'failed' ? cluster.targetVersion : null))
        : to === 'failed'
          ? cluster.targetVersion
          : null,
  };
};

export const evolveCluster = (state: ClusterState, event: ClusterEvent): ClusterState => {
  switch (event.type) {
    case 'ClusterRequested': {
      const { at: _at, velero, ...d } = event.data;
      return {
        status: 'requested',
        ...d,
        adopted: false,
        pools: [],
        failedFrom: null,
        targetVersion: null,
        apiEndpoint: null,
        caCertificate: null,
        velero: velero ?? null,
      };
    }
    case 'ClusterAdopted':
      return {
        status: 'running',
        clusterId: event.data.clusterId,
        name: null,
        k8sVersion: null,
        podCidr: null,
        serviceCidr: null,
        adopted: true,
        pools: [],
        failedFrom: null,
        targetVersion: null,
        apiEndpoint: null,
        caCertificate: null,
        velero: null,
      };
    case 'ClusterTransitioned': {
      const cluster = existing(state, event.data.clusterId);
      const { from, to } = event.data;
      return {
        ...cluster,
        status: to,
        failedFrom: to === 'failed' ? from : null,
        ...versionsAfter(cluster, event.data),
        apiEndpoint: event.data.apiEndpoint ?? cluster.apiEndpoint,
        caCertificate: event.data.caCertificate ?? cluster.caCertificate,
      };
    }
    case 'ClusterPoolAdded': {
      const cluster = existing(state, event.data.clusterId);
      return { ...cluster, pools: [...cluster.pools, event.data.poolId] };
    }
    case 'ClusterPoolRemoved': {
      const cluster = existing(state, event.data.clusterId);
      return { ...cluster, pools: cluster.pools.filter((p) => p !== event.data.poolId) };
    }
    case 'ClusterNetworkSet': {
      const { podCidr, serviceCidr } = event.data;
      return { ...existing(state, event.data.clusterId), podCidr, serviceCidr };
    }
    default:
      return assertNever(event, 'cluster event');
  }
};

export const clusterDecider: Decider<ClusterCommand, ClusterEvent, ClusterState> = {
  decide: decideCluster,
  evolve: evolveCluster,
  initialState: () => ({ status: 'absent' }),
};

export const clusterAggregate: Aggregate<ClusterCommand, ClusterEvent, ClusterState> = {
  name: 'cluster',
  decider: clusterDecider,
  codec: clusterCodec,
};
