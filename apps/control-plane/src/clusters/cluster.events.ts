import { EventCodec } from '@fleet/kernel';

export const CLUSTER_STATUSES = [
  'requested',
  'provisioning',
  'bootstrapping',
  'running',
  'degraded',
  'upgrading',
  'deleting',
  'deleted',
  'failed',
] as const;
export type ClusterStatus = (typeof CLUSTER_STATUSES)[number];

/** Velero as asked at create: stored and shown; the backups issue acts on it. */
export type VeleroSettings = {
  readonly enabled: boolean;
  readonly schedule: string | null;
  readonly ttlHours: number | null;
};

/** The cluster's stream: its lifecycle and its liveness (cluster-liveness.events.ts) both. */
export const clusterStreamId = (clusterId: string): string => `cluster-${clusterId}`;

/**
 * The cluster's lifecycle on `cluster-<id>`, beside the liveness events of the same stream
 * (each decider decodes only its own). Pools are listed here too: the cluster stream is where
 * "the last pool cannot be deleted" is decided, under its optimistic concurrency.
 */
export type ClusterEvent =
  | {
      type: 'ClusterRequested';
      data: {
        clusterId: string;
        name: string;
        k8sVersion: string;
        podCidr: string;
        serviceCidr: string;
        /** Absent on events recorded before velero was taken. */
        velero?: VeleroSettings | null;
        at: string;
      };
    }
  /** First seen in an operator's report: created outside this API, so running already. */
  | { type: 'ClusterAdopted'; data: { clusterId: string; seenNodeId: string; at: string } }
  | {
      type: 'ClusterTransitioned';
      data: {
        clusterId: string;
        from: ClusterStatus;
        to: ClusterStatus;
        reason: string | null;
        /** On → upgrading: the version it upgrades to (becomes k8sVersion back in running). */
        k8sVersion?: string | null;
        /** On → running, as the provisioner reports it: where the API server answers, and its CA (public). */
        apiEndpoint?: string | null;
        caCertificate?: string | null;
        at: string;
      };
    }
  | { type: 'ClusterPoolAdded'; data: { clusterId: string; poolId: string; at: string } }
  | { type: 'ClusterPoolRemoved'; data: { clusterId: string; poolId: string; at: string } }
  /** An admin set the blocks (a cluster adopted from reports has none until then). */
  | {
      type: 'ClusterNetworkSet';
      data: { clusterId: string; podCidr: string; serviceCidr: string; at: string };
    };

export const clusterCodec = new EventCodec<ClusterEvent>({
  ClusterRequested: 1,
  ClusterAdopted: 1,
  ClusterTransitioned: 1,
  ClusterPoolAdded: 1,
  ClusterPoolRemoved: 1,
  ClusterNetworkSet: 1,
});
