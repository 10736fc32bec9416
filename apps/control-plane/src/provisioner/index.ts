/** The provisioner as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  CreateNodesRequest,
  NodeProvisioner,
  PROVISIONER,
  Provisioner,
  RemoveNodesRequest,
} from './provisioner.port';
export {
  ClusterPoolPlan,
  ClusterProvisioner,
  CreateClusterRequest,
  DeleteClusterRequest,
  RepairClusterRequest,
  UpgradeClusterRequest,
} from './cluster-provisioner.port';
export {
  CREDENTIAL_ISSUER,
  CredentialIssuer,
  CredentialRequest,
  IssuedCredential,
  KubeAccess,
} from './credential-issuer.port';
export { ProvisionerModule } from './provisioner.module';
export { MESH_CONNECTOR, MeshConnector, MeshEnd, MeshLinkRequest } from './mesh-connector.port';
export { SimulatedMeshConnector } from './simulated-mesh-connector';
export { MeshConnectorModule } from './mesh-connector.module';
