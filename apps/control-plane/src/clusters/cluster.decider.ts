import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { ClusterEvent, ClusterStatus, clusterCodec } from './cluster.events';

export type ClusterCommand =
  | {
      type: 'RequestCluster';
      data: {
        clusterId: string;
        name: string;
        k8sVersion: string;
        podCidr: string;
        serviceCidr: string;
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
        at: string;
      };
    }
  /** An admin's upgrade: unlike a reported step, asking it again is not "already there". */
  | { type: 'UpgradeCluster'; data: { clusterId: string; k8sVersion: string; at: string } }
  | { type: 'AddPoolToCluster'; data: { clusterId: string; poolId: string; at: string } }
  | { type: 'RemovePoolFromCluster'; data: { clusterId: string; poolId: string; at: string } };

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
  deleting: [],
  failed: ['deleting'],
};

/** Whether `to` may follow `state` (failed retries the step it failed in). */
export const mayTransition = (
  state: Extract<ClusterState, { failedFrom: unknown }>,
  to: ClusterStatus,
): boolean => {
  if (to === 'failed') return state.status !== 'failed';
  if (state.status === 'failed') return to === state.failedFrom || NEXT.failed.includes(to);
  return NEXT[state.status].includes(to);
};

/** The cluster a command or event needs; `id` names it when there is none (404). */
const existing = (state: ClusterState, id: string): Extract<ClusterState, { pools: unknown }> => {
  if (state.status === 'absent') throw notFound('cluster', id);
  return state;
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
    case 'TransitionCluster': {
      const cluster = existing(state, command.data.clusterId);
      const { to, reason, at } = command.data;
      const version =
        to === 'upgrading' && command.data.k8sVersion
          ? { k8sVersion: command.data.k8sVersion }
          : {};
      if (cluster.status === to) return []; // reported twice: already there
      if (!mayTransition(cluster, to))
        throw invalidTransition('cluster', cluster.status, `go to ${to}`);
      return [
        {
          type: 'ClusterTransitioned',
          data: { clusterId: cluster.clusterId, from: cluster.status, to, reason, ...version, at },
        },
      ];
    }
    case 'UpgradeCluster': {
      // An upgrade under way is refused whatever its version: taken as a repeat, a second
      // upgrade was answered 202 with an operation that "succeeded" at the first's version.
      const cluster = existing(state, command.data.clusterId);
      if (cluster.status === 'upgrading' || !mayTransition(cluster, 'upgrading')) {
        throw invalidTransition('cluster', cluster.status, 'be upgraded');
      }
      const { k8sVersion, at } = command.data;
      // Kubernetes upgrades forward only: the same or an older version is no upgrade.
      if (cluster.k8sVersion !== null && compareVersions(k8sVersion, cluster.k8sVersion) <= 0) {
        throw new DomainError(
          'version_not_newer',
          `cluster ${cluster.clusterId} runs ${cluster.k8sVersion}: ${k8sVersion} is not newer`,
          'conflict',
          { clusterId: cluster.clusterId, k8sVersion: cluster.k8sVersion },
        );
      }
      return [
        {
          type: 'ClusterTransitioned',
          data: {
            clusterId: cluster.clusterId,
            from: cluster.status,
            to: 'upgrading',
            reason: `upgrade to ${k8sVersion}`,
            k8sVersion,
            at,
          },
        },
      ];
    }
    case 'AddPoolToCluster': {
      const cluster = existing(state, command.data.clusterId);
      if (cluster.pools.includes(command.data.poolId)) return [];
      if (cluster.status === 'deleting') {
        throw invalidTransition('cluster', cluster.status, 'take a new node pool');
      }
      const { poolId, at } = command.data;
      return [{ type: 'ClusterPoolAdded', data: { clusterId: cluster.clusterId, poolId, at } }];
    }
    case 'RemovePoolFromCluster': {
      const cluster = existing(state, command.data.clusterId);
      if (!cluster.pools.includes(command.data.poolId)) return [];
      if (cluster.pools.length === 1 && cluster.status !== 'deleting') {
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
      const { at: _at, ...d } = event.data;
      return {
        status: 'requested',
        ...d,
        adopted: false,
        pools: [],
        failedFrom: null,
        targetVersion: null,
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
      };
    case 'ClusterTransitioned': {
      const cluster = existing(state, event.data.clusterId);
      const { from, to } = event.data;
      return {
        ...cluster,
        status: to,
        failedFrom: to === 'failed' ? from : null,
        ...versionsAfter(cluster, event.data),
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
