/** One end of a mesh link as the provisioner needs it to join the two clusters' networks. */
export type MeshEnd = {
  readonly clusterId: string;
  readonly podCidr: string | null;
  readonly serviceCidr: string | null;
};

export type MeshLinkRequest = {
  readonly meshRequestId: string;
  readonly from: MeshEnd;
  readonly to: MeshEnd;
};

/**
 * Joins and parts two clusters' pod and service networks (Cilium Cluster Mesh). Each call
 * resolves once the link is up (or down), throws when the provisioner could not, and is
 * idempotent per request: asked again after a restart, it finishes what it started.
 */
export interface MeshConnector {
  connectMesh(request: MeshLinkRequest): Promise<void>;
  disconnectMesh(request: MeshLinkRequest): Promise<void>;
}

export const MESH_CONNECTOR = Symbol('MESH_CONNECTOR');
