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
export { ProvisionerModule } from './provisioner.module';
