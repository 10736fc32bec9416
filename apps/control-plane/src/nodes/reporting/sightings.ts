import { Made } from '@fleet/kernel';
import { Beat, Heartbeat, HeartbeatStore } from '../heartbeat/heartbeat.store';
import { NodeReport } from '../node.decider';

/**
 * The heartbeat store as a report uses it, and the report path's one place that knows how each
 * store answers: a store in this process (the embedded one) is read and written at once,
 * without a promise; a store that writes on its own (Redis) is handed a report's sightings
 * and the report does not wait for the write; any other is awaited. What a report waits for,
 * and what not waiting can lose: docs/ARCHITECTURE.md, "Nodes and liveness".
 */
export class Sightings {
  constructor(private readonly store: HeartbeatStore) {}

  /**
   * The heartbeats a report's order needs. From a store out of process, only a node reported
   * with an observedAt can be out of order (`isOutOfOrder`; a report without one is ordered by
   * its receive time), so only those nodes' are read, and a report of none of them reads
   * nothing. The others are null: their sightings keep the store's newest observedAt (`touch`
   * keeps the later).
   */
  newest(
    nodeIds: readonly string[],
    reports: readonly NodeReport[],
  ): Made<Array<Heartbeat | null>> {
    const inProcess = this.store.getNow?.(nodeIds);
    if (inProcess !== undefined) return inProcess;
    let ordered = 0;
    for (const r of reports) if (r.observedAt !== null) ordered++;
    if (ordered === reports.length) return this.store.get(nodeIds);
    const none = new Array<Heartbeat | null>(reports.length).fill(null);
    if (ordered === 0) return none;
    const ids: string[] = [];
    for (let i = 0; i < reports.length; i++)
      if (reports[i].observedAt !== null) ids.push(nodeIds[i]);
    return this.store.get(ids).then((read) => {
      for (let i = 0, k = 0; i < reports.length; i++) {
        if (reports[i].observedAt !== null) none[i] = read[k++];
      }
      return none;
    });
  }

  /**
   * Before a report's changes are appended: a store out of process answers first (one round
   * trip, on the rare changing report), so while it is out of reach the report is refused with
   * nothing appended. In that round trip, a store shared by replicas orders the changing nodes
   * reported with an observedAt (`claims`, heartbeat-order.ts): the answer holds, per claim, the
   * later observedAt another replica recorded for the node (the report is out of order), else
   * null. In process (the embedded store) reports of a node are serialised already: no claim.
   */
  claimOrder(claims: readonly Beat[]): Made<ReadonlyArray<number | null> | undefined> {
    if (this.store.touchNow) return undefined;
    if (claims.length > 0 && this.store.claimOrder) return this.store.claimOrder(claims);
    return this.store.ping().then(() => undefined);
  }

  /** A report's sightings: written at once in process, handed over, or awaited. */
  record(beats: readonly Beat[]): Made<void> {
    if (this.store.touchNow) return this.store.touchNow(beats);
    if (this.store.touchLater?.(beats)) return;
    return this.store.touch(beats);
  }
}
