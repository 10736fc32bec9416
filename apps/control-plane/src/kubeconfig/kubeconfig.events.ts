import { EventCodec } from '@fleet/kernel';

/** Who stood where on the cluster when it asked: a member's role, or its global one. */
export type KubeconfigRole = 'owner' | 'editor' | 'viewer' | 'admin' | 'auditor';

/**
 * A kubeconfig was handed out: who, with which role and access, until when. Never the
 * credential itself (it would outlive its expiry in the log, readable by every auditor).
 */
export type KubeconfigEvent = {
  type: 'KubeconfigIssued';
  data: {
    clusterId: string;
    sub: string;
    role: KubeconfigRole;
    access: 'view' | 'edit' | 'admin';
    expiresAt: string;
    at: string;
  };
};

export const kubeconfigCodec = new EventCodec<KubeconfigEvent>({ KubeconfigIssued: 1 });

/** One stream per cluster of the kubeconfigs issued for it. */
export const kubeconfigStreamId = (clusterId: string): string => `kubeconfigs-${clusterId}`;
