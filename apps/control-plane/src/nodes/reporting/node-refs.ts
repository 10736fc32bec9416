import { NodeRef, nodeRefOf } from '../node.aggregate';

/** Refs kept (a SHA-1 each to derive, for every node of every report); past this, it starts over. */
const CAPACITY = 250_000;

/**
 * The refs of reported nodes, derived once per (cluster, hostname) and shared after that. By
 * cluster, then hostname: no key is concatenated per lookup, and the same stream id string
 * comes back every time (its hash computed once, found by identity in the maps keyed by it,
 * such as the pipeline's cache).
 */
export class NodeRefs {
  private readonly byCluster = new Map<string, Map<string, NodeRef>>();
  private count = 0;

  of(clusterId: string, hostname: string): NodeRef {
    let byHost = this.byCluster.get(clusterId);
    const known = byHost?.get(hostname);
    if (known !== undefined) return known;
    if (this.count >= CAPACITY) {
      this.byCluster.clear();
      this.count = 0;
      byHost = undefined;
    }
    if (byHost === undefined) this.byCluster.set(clusterId, (byHost = new Map()));
    const ref = nodeRefOf(clusterId, hostname);
    byHost.set(hostname, ref);
    this.count++;
    return ref;
  }
}
