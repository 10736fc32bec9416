import { createHash } from 'node:crypto';
import type { SimulatedFailure } from '../config/config';
import type { ClusterStatus } from '../clusters';

/** The simulated provisioner's next move of a cluster, and what it does before it. */
export type SimulatedMove = {
  readonly from: ClusterStatus;
  readonly to: ClusterStatus;
  readonly reason: string | null;
  /** Reaching running from bootstrapping: the endpoint and CA are reported (the nodes follow). */
  readonly bootstraps: boolean;
};

/**
 * What the simulated provisioner does next with a cluster as it stands, pure: one step along
 * requested → provisioning → bootstrapping → running, an upgrade or a degraded cluster back
 * to running, a failed one back to the step it failed in; nothing once running or deleting.
 * `failAt`: the step to fail (once: the caller passes null after the cluster failed once).
 */
export const nextSimulatedMove = (
  cluster: { readonly status: ClusterStatus | 'absent'; readonly failedFrom: ClusterStatus | null },
  failAt: SimulatedFailure | null,
): SimulatedMove | null => {
  const { status } = cluster;
  const move = (to: ClusterStatus, reason: string | null = null, bootstraps = false) =>
    status === 'absent' ? null : { from: status, to, reason, bootstraps };
  if (status === failAt) return move('failed', `simulated failure during ${status}`);
  switch (status) {
    case 'requested':
      return move('provisioning');
    case 'provisioning':
      return move('bootstrapping');
    case 'bootstrapping':
      return move('running', null, true);
    case 'upgrading':
      return move('running', 'upgrade done');
    case 'degraded':
      return move('running', 'repaired');
    case 'failed':
      return cluster.failedFrom && cluster.failedFrom !== 'deleting'
        ? move(cluster.failedFrom, 'repair: retrying the failed step')
        : null;
    case 'absent':
    case 'running':
    case 'deleting':
    case 'deleted':
      return null;
    default:
      return status satisfies never;
  }
};

/** Where a simulated cluster's API server "answers". */
export const simulatedEndpoint = (clusterId: string): string =>
  `https://${clusterId}.k8s.sim.local:6443`;

/** A PEM-shaped public certificate for the cluster (no key exists: nothing can be signed with it). */
export const simulatedCaCertificate = (clusterId: string): string => {
  const bytes = Buffer.concat(
    [0, 1, 2, 3].map((i) => createHash('sha256').update(`${clusterId}:${i}`).digest()),
  );
  const body = bytes
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
};
