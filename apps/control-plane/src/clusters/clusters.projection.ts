import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { assertNever } from '@fleet/kernel';
import { versionsAfter } from './cluster.decider';
import { ClusterEvent, ClusterStatus, VeleroSettings, clusterCodec } from './cluster.events';
import { ClusterLivenessEvent, clusterLivenessCodec } from './cluster-liveness.events';
import { MembershipEvent, membershipCodec } from './members/membership.events';
import { MembersFields, noMembers, projectMembers } from './members/members.projection';

export const CLUSTERS = 'clusters';

export type ClusterDoc = {
  _id: string;
  _rev: number;
  clusterId: string;
  name: string | null;
  k8sVersion: string | null;
  podCidr: string | null;
  serviceCidr: string | null;
  status: ClusterStatus;
  /** While upgrading: the version it upgrades to. */
  targetVersion: string | null;
  adopted: boolean;
  /** Where the API server answers and its CA, once the provisioner reported them (running). */
  apiEndpoint: string | null;
  caCertificate: string | null;
  velero: VeleroSettings | null;
  pools: string[];
  history: Array<{
    from: ClusterStatus | null;
    to: ClusterStatus;
    reason: string | null;
    at: string;
  }>;
  createdAt: string;
  updatedAt: string;
  /** The mass-failure guard: whether it holds the cluster's silent nodes, and which. */
  reports: ClusterReports;
} & Partial<MembersFields>;

export type ClusterReports = {
  status: 'reporting' | 'stalled';
  stalledSince: string | null;
  heldNodes: Array<{ nodeId: string; hostname: string }>;
  /** When an admin last confirmed an outage of held nodes (they went offline then). */
  outageConfirmedAt: string | null;
};

export const reportingNormally = (): ClusterReports => ({
  status: 'reporting',
  stalledSince: null,
  heldNodes: [],
  outageConfirmedAt: null,
});

export const projectCluster = (
  doc: ClusterDoc | null,
  event: ClusterEvent,
  revision: number,
): ClusterDoc | null => {
  const base = (clusterId: string, at: string): ClusterDoc => ({
    _id: clusterId,
    _rev: revision,
    clusterId,
    name: null,
    k8sVersion: null,
    podCidr: null,
    serviceCidr: null,
    status: 'requested',
    targetVersion: null,
    adopted: false,
    apiEndpoint: null,
    caCertificate: null,
    velero: null,
    pools: [],
    history: [],
    createdAt: at,
    updatedAt: at,
    reports: reportingNormally(),
    ...noMembers(),
  });
  switch (event.type) {
    case 'ClusterRequested': {
      const { at, velero, ...d } = event.data;
      return {
        ...base(d.clusterId, at),
        ...d,
        velero: velero ?? null,
        history: [{ from: null, to: 'requested', reason: null, at }],
      };
    }
    case 'ClusterAdopted': {
      const { clusterId, at } = event.data;
      return {
        ...base(clusterId, at),
        status: 'running',
        adopted: true,
        history: [{ from: null, to: 'running', reason: 'adopted from an operator report', at }],
      };
    }
    case 'ClusterTransitioned': {
      if (!doc) return null;
      const { from, to, reason, at } = event.data;
      return {
        ...doc,
        _rev: revision,
        status: to,
        ...versionsAfter(doc, event.data),
        apiEndpoint: event.data.apiEndpoint ?? doc.apiEndpoint ?? null,
        caCertificate: event.data.caCertificate ?? doc.caCertificate ?? null,
        history: [...doc.history, { from, to, reason, at }],
        updatedAt: at,
      };
    }
    case 'ClusterPoolAdded':
      if (!doc) return null;
      return { ...doc, _rev: revision, pools: [...doc.pools, event.data.poolId] };
    case 'ClusterPoolRemoved':
      if (!doc) return null;
      return { ...doc, _rev: revision, pools: doc.pools.filter((p) => p !== event.data.poolId) };
    case 'ClusterNetworkSet': {
      if (!doc) return null;
      const { podCidr, serviceCidr, at } = event.data;
      return { ...doc, _rev: revision, podCidr, serviceCidr, updatedAt: at };
    }
    default:
      return assertNever(event, 'cluster event');
  }
};

/** The guard's events on the same stream: what the cluster view says of its reports. */
export const projectClusterReports = (
  doc: ClusterDoc | null,
  event: ClusterLivenessEvent,
  revision: number,
): ClusterDoc | null => {
  if (!doc) return null;
  const before = doc.reports ?? reportingNormally();
  const reports = ((): ClusterReports => {
    switch (event.type) {
      case 'ClusterReportsStalled':
        return {
          ...before,
          status: 'stalled',
          stalledSince: event.data.at,
          heldNodes: event.data.staleNodes,
        };
      case 'ClusterReportsResumed':
        return { ...before, status: 'reporting', stalledSince: null, heldNodes: [] };
      case 'ClusterOutageConfirmed':
        return {
          status: 'reporting',
          stalledSince: null,
          heldNodes: [],
          outageConfirmedAt: event.data.at,
        };
      default:
        return assertNever(event, 'cluster liveness event');
    }
  })();
  return { ...doc, _rev: revision, reports };
};

/** Membership events on the same stream: the members the list filters and the guard reads. */
export const projectClusterMembers = (
  doc: ClusterDoc | null,
  event: MembershipEvent,
  revision: number,
): ClusterDoc | null => {
  if (!doc) return null;
  const before = { members: doc.members ?? [], memberSubs: doc.memberSubs ?? [] };
  return { ...doc, _rev: revision, ...projectMembers(before, event) };
};

const decodeAny = (stored: StoredEvent) => {
  const cluster = clusterCodec.decode(stored.type, stored.data);
  if (cluster) return { cluster };
  const liveness = clusterLivenessCodec.decode(stored.type, stored.data);
  if (liveness) return { liveness };
  const members = membershipCodec.decode(stored.type, stored.data);
  return members ? { members } : null;
};

export const clustersProjection: Projection = {
  name: 'clusters',
  collections: [{ name: CLUSTERS }],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('cluster-')) return;
    const decoded = decodeAny(stored);
    if (!decoded) return;
    const id = stored.streamId.slice('cluster-'.length);
    const doc = await writer.get<ClusterDoc>(CLUSTERS, id);
    if (doc && stored.revision <= doc._rev) return;
    const next = decoded.cluster
      ? projectCluster(doc, decoded.cluster, stored.revision)
      : decoded.liveness
        ? projectClusterReports(doc, decoded.liveness, stored.revision)
        : projectClusterMembers(doc, decoded.members!, stored.revision);
    if (next) writer.upsert(CLUSTERS, next);
  },
};
