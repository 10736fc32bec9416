import { Projection } from '@fleet/cqrs';
import { Doc } from '@fleet/readmodels/port';
import { Placement, sessionCodec } from '../sessions';
import { BillingLine, BillingRecord, billingStep, toBillingRecord } from './billing-line';

export const BILLING_PROJECTION = 'billing';
/** Insert-only: a record is a fact; corrections would be new compensating records. */
export const BILLING_RECORDS = 'billing_records';
/** Working set: the running segment of each session (upserted on open, deleted on close). */
export const BILLING_OPEN_SEGMENTS = 'billing_open_segments';
/** Insert-only: a session's owner, fixed at its request, which the closing events do not carry. */
export const BILLING_SESSION_OWNERS = 'billing_session_owners';

export type BillingRecordDoc = Doc & BillingRecord;

export type OpenSegmentDoc = Doc & {
  readonly placement: Placement;
  readonly from: string;
  /** Global position of the event that opened it: tells a redelivered older event apart. */
  readonly openedAt: number;
};

export type SessionOwnerDoc = Doc & { readonly owner: string };

/** The stored document of a record: `_id` is the closing event's id, so a replay re-inserts it unchanged. */
export const recordDoc = (recordId: string, line: BillingLine): BillingRecordDoc => ({
  _id: recordId,
  ...toBillingRecord(recordId, line),
  gpuUuids: [...line.gpuUuids],
});

/**
 * Billing records from session events, through the same `billingStep` the verifier uses.
 * Every write (record, open segment, owner) commits with this projection's checkpoint.
 * Nothing here updates or deletes a record, and no node event is read: deleting a node or
 * its cards leaves billing untouched (records carry hostname and card uuids themselves).
 */
export const billingProjection: Projection = {
  name: BILLING_PROJECTION,
  collections: [
    {
      name: BILLING_RECORDS,
      insertOnly: true,
      // The sort (MongoDB): records by `from`, over everyone's or filtered by owner or session.
      indexes: [
        { from: 1, _id: 1 },
        { owner: 1, from: 1, _id: 1 },
        { sessionId: 1, from: 1, _id: 1 },
      ],
    },
    { name: BILLING_OPEN_SEGMENTS },
    { name: BILLING_SESSION_OWNERS, insertOnly: true },
  ],
  async apply(stored, writer) {
    const event = sessionCodec.decode(stored.type, stored.data);
    if (!event) return;
    const sessionId = event.data.sessionId;
    if (event.type === 'SessionRequested') {
      writer.insert(BILLING_SESSION_OWNERS, { _id: sessionId, owner: event.data.owner });
      return;
    }
    const open = await writer.get<OpenSegmentDoc>(BILLING_OPEN_SEGMENTS, sessionId);
    // Redelivered after a later open was stored (a page replayed when its checkpoint was
    // not): this event is already reflected, and re-applying it would close the wrong segment.
    if (open && open.openedAt >= stored.position) return;
    const owner = await writer.get<SessionOwnerDoc>(BILLING_SESSION_OWNERS, sessionId);
    const before = {
      owner: owner?.owner ?? null,
      open: open ? { placement: open.placement, from: open.from } : null,
    };
    const { state, closed } = billingStep(before, event);
    if (closed) writer.insert(BILLING_RECORDS, recordDoc(stored.eventId, closed));
    if (state.open === before.open) return;
    if (state.open) {
      writer.upsert(BILLING_OPEN_SEGMENTS, {
        _id: sessionId,
        placement: state.open.placement,
        from: state.open.from,
        openedAt: stored.position,
      });
    } else if (open) {
      writer.delete(BILLING_OPEN_SEGMENTS, sessionId);
    }
  },
};
