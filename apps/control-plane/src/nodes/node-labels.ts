/** Labels every provisioned node carries, so its report lands it in its pool. */
export const POOL_LABEL = 'fleet/pool';
/** Which provisioner made the node (the simulated one finds its nodes by it). */
export const PROVISIONER_LABEL = 'fleet/provisioner';
