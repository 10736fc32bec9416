/**
 * Heartbeats are not events (like Kubernetes' node Lease objects): a report that changes
 * nothing only refreshes the node's last-seen time here. Times are epoch ms; `seenAt` is the
 * server's receive time, `observedAt` the operator's newest observedAt (orders reports).
 */
export type Heartbeat = { readonly seenAt: number; readonly observedAt: number | null };
export type Beat = Heartbeat & { readonly nodeId: string };

export interface HeartbeatStore {
  touch(beats: readonly Beat[]): Promise<void>;
  /** In the order asked; null for a node never seen (or lost with the store). */
  get(nodeIds: readonly string[]): Promise<Array<Heartbeat | null>>;
  remove(nodeId: string): Promise<void>;
  /**
   * Optional: `get` and `touch` at once, without a promise, from a store held in this process
   * (the embedded one): a report that changes nothing waits no turn of the event loop for them.
   */
  getNow?(nodeIds: readonly string[]): Array<Heartbeat | null>;
  touchNow?(beats: readonly Beat[]): void;
  /**
   * Optional, for a store out of process (Redis): takes the sightings without the caller
   * waiting for the store to confirm them, when it can; false when it cannot (out of reach, or
   * its last writes failed), and the caller awaits `touch` instead. Taken sightings are in
   * this process's reads at once (`get`), in the store a round trip later.
   */
  touchLater?(beats: readonly Beat[]): boolean;
  /**
   * Since when reports have been recordable without a break (epoch ms): this process's start
   * (the store's construction), or the store's last return after being out of reach,
   * disconnected or stalled. Reports could not be recorded before it (the control plane was
   * down, or the store), and writes that timed out in a stall land late with their old
   * receive time: silence is counted from here at the earliest. Without the start, a restart
   * longer than NODE_STALE_SEC took every node whose heartbeat survived in Redis offline the
   * moment the control plane came back, ending its sessions.
   */
  restoredAt(): number;
  /**
   * The last sighting this process recorded for each node, without asking the store: what
   * reads show while the store is out of reach (no report can be recorded meanwhile, so
   * these are the latest this process could know). Null for a node it has not recorded.
   */
  recordedHere(nodeIds: readonly string[]): Array<Heartbeat | null>;
  /**
   * Optional, for a store shared by replicas (Redis): for each node, atomically, answers the
   * stored observedAt where it is later than the beat's (a newer report was seen), else writes
   * the beat and answers null (heartbeat-order.ts). Fails as `ping` does while out of reach.
   */
  claimOrder?(beats: readonly Beat[]): Promise<Array<number | null>>;
  /** Asks the store; an answer after an outage is its return (`restoredAt`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export { laterObserved } from './heartbeat-slots';
// The adapters, where the module and the specs have always found them.
export { MemoryHeartbeatStore } from './memory-heartbeat.store';
export type { HeartbeatSnapshot } from './memory-heartbeat.store';
export { RedisHeartbeatStore } from './redis-heartbeat.store';
