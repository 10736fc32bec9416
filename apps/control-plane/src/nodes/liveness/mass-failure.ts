import { isBeingRemoved } from '../node.events';

/**
 * The mass-failure guard (after Kubernetes' zone-disruption handling): when more than
 * `ratio` of a cluster's online nodes, and at least `minNodes`, are stale together, the
 * likelier fault is the operator or our ingest, not the nodes.
 */
export const isMassFailure = (
  stale: number,
  online: number,
  ratio: number,
  minNodes: number,
): boolean => online > 0 && stale >= minNodes && stale / online > ratio;

/** An online node of a cluster as the mass-failure guard weighs it. */
export type GuardNode = {
  /** Its last sighting (or when the loss of its heartbeat was noticed). */
  readonly seenAt: number;
  /** Where its silence is timed from: its last sighting, or a later restart of every clock. */
  readonly silentSince: number;
  /** The removal a pool operation asked for, if any (`until`: the operation's deadline). */
  readonly removal: { readonly until: string } | null;
};

/**
 * The nodes the guard counts (`judged`, the denominator) and those of them that fell silent
 * (`stale`, silent for half a window: nodes report every few seconds, so one silent that long
 * stopped with the others). Left out of both: silence from before an admin confirmed an
 * outage (those nodes go offline), and nodes a pool operation is removing, until its deadline:
 * the provisioner takes them down, so their silence is expected, not a fault of the cluster.
 */
export const weighSilence = <N extends GuardNode>(
  nodes: readonly N[],
  now: number,
  staleMs: number,
  outageConfirmedAt: number | null,
): { judged: N[]; stale: N[] } => {
  const judged = nodes.filter(
    (n) =>
      (outageConfirmedAt === null || n.seenAt >= outageConfirmedAt) &&
      !isBeingRemoved(n.removal, now),
  );
  const stale = judged.filter((n) => n.silentSince + staleMs / 2 <= now);
  return { judged, stale };
};
