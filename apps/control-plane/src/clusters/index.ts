/** The clusters slice as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  CLUSTER_STATUSES,
  ClusterStatus,
  ClusterEvent,
  clusterCodec,
  clusterStreamId,
} from './cluster.events';
export { ClusterState } from './cluster.decider';
export { ClusterLivenessEvent, clusterLivenessCodec } from './cluster-liveness.events';
export { ClusterLivenessCommand, ClusterLivenessState } from './cluster-liveness.decider';
export { CLUSTERS, ClusterDoc } from './clusters.projection';
export { CLUSTERS_PROJECTION } from './clusters.service';
export { OperationAccepted } from './clusters.dto';
export * from './clusters.messages';
export { ClustersModule } from './clusters.module';
