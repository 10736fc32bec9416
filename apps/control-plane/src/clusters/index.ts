/** The clusters slice as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  CLUSTER_STATUSES,
  ClusterStatus,
  ClusterEvent,
  VeleroSettings,
  clusterCodec,
  clusterStreamId,
} from './cluster.events';
export { ClusterState } from './cluster.decider';
export { WORKING_CLUSTER_STATUSES, refuseUnlessWorking, takesPlacements } from './cluster-gate';
export { ClusterLivenessEvent, clusterLivenessCodec } from './cluster-liveness.events';
export { ClusterLivenessCommand, ClusterLivenessState } from './cluster-liveness.decider';
export { CLUSTERS, ClusterDoc } from './clusters.projection';
export { MembershipEvent, membershipCodec } from './members/membership.events';
export { MemberDoc, roleOn } from './members/members.projection';
export { CLUSTERS_PROJECTION } from './clusters.service';
export { OperationAccepted } from './clusters.dto';
export { AdoptCluster } from './adopt-cluster.handler';
export { AddPoolToCluster } from './add-pool-to-cluster.handler';
export { RemovePoolFromCluster } from './remove-pool-from-cluster.handler';
export { MarkClusterReportsStalled } from './mark-cluster-reports-stalled.handler';
export { ResumeClusterReports } from './resume-cluster-reports.handler';
export { GetClusterState } from './get-cluster-state.handler';
export { GetClusterLiveness } from './get-cluster-liveness.handler';
export { OpenClusterOperation, ClusterPoolSpec } from './open-cluster-operation.command';
export { CheckNodePools } from './check-node-pools.command';
export { TransitionCluster, DeleteCluster, SetClusterNetwork } from './transition-cluster.handler';
export { ClustersModule } from './clusters.module';
export { LiveMeshesOf } from './live-meshes-of.query';
export { PoolSummariesOf, ClusterPoolSummary } from './pool-summaries-of.query';
export {
  BackupPoliciesOf,
  ClusterVeleroView,
  VELERO_AT_CREATE_REACTOR,
} from './backup-policies-of.query';
