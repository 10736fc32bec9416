import type { Beat, Heartbeat } from './heartbeat.store';

/** A stored heartbeat, updated in place. */
export type Slot = { seenAt: number; observedAt: number | null };

/** The later of two observedAt, none (null) being earlier than any. */
export const laterObserved = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.max(a, b);

/**
 * Overwrites each node's slot in place: a new object per touch would live until the node's
 * next report (seconds), so every one would be copied by two scavenges and promoted, and a
 * fleet reporting all the time would fill the old generation with them. Never backwards: a
 * touch that lands after a later one (two reports or two replicas racing) keeps the later
 * times, or the report order (observedAt) would go back and an older report would apply.
 */
export const writeSlots = (slots: Map<string, Slot>, beats: readonly Beat[]): void => {
  for (const b of beats) {
    const slot = slots.get(b.nodeId);
    if (slot === undefined) slots.set(b.nodeId, { seenAt: b.seenAt, observedAt: b.observedAt });
    else {
      slot.seenAt = Math.max(slot.seenAt, b.seenAt);
      slot.observedAt = laterObserved(slot.observedAt, b.observedAt);
    }
  }
};

/** A copy (short-lived): a caller keeps what it read, whatever a later touch writes. */
export const readSlot = (slots: ReadonlyMap<string, Slot>, nodeId: string): Heartbeat | null => {
  const slot = slots.get(nodeId);
  return slot === undefined ? null : { seenAt: slot.seenAt, observedAt: slot.observedAt };
};
