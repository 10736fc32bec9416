import { stringify } from 'yaml';
import { ClusterRole } from '../platform/auth/cluster-access';
import { Caller, hasRole } from '../platform/auth/caller';
import type { KubeAccess } from '../provisioner';
import { KubeconfigRole } from './kubeconfig.events';

/**
 * The caller's standing on the cluster and the access its credential gets: admin (global)
 * and owners administer, editors edit, viewers and auditors read. A member's role counts
 * before an auditor's global read.
 */
export const kubeAccessOf = (
  caller: Caller,
  member: ClusterRole | null,
): { role: KubeconfigRole; access: KubeAccess } | null => {
  if (hasRole(caller, ['admin'])) return { role: 'admin', access: 'admin' };
  if (member === 'owner') return { role: 'owner', access: 'admin' };
  if (member === 'editor') return { role: 'editor', access: 'edit' };
  if (member === 'viewer') return { role: 'viewer', access: 'view' };
  if (hasRole(caller, ['auditor'])) return { role: 'auditor', access: 'view' };
  return null;
};

export type KubeconfigInput = {
  clusterId: string;
  server: string;
  /** The cluster CA, base64 PEM; without one the client trusts its system roots. */
  caData: string | null;
  sub: string;
  token: string;
};

/** The names a kubeconfig uses: the cluster by its id, user and context `<sub>@<clusterId>`. */
export const kubeconfigNames = (clusterId: string, sub: string) => ({
  cluster: clusterId,
  user: `${sub}@${clusterId}`,
  context: `${sub}@${clusterId}`,
});

/** Pure: the kubeconfig document, as YAML. */
export const renderKubeconfig = (input: KubeconfigInput): string => {
  const names = kubeconfigNames(input.clusterId, input.sub);
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: names.cluster,
        cluster: {
          server: input.server,
          ...(input.caData ? { 'certificate-authority-data': input.caData } : {}),
        },
      },
    ],
    users: [{ name: names.user, user: { token: input.token } }],
    contexts: [{ name: names.context, context: { cluster: names.cluster, user: names.user } }],
    'current-context': names.context,
    preferences: {},
  });
};
