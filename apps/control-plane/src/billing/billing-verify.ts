import { EventStore, LOG_START, LogPosition, laterPosition } from '@fleet/eventstore/port';
import { Filter, ReadModelStore, findAll, pagesOf } from '@fleet/readmodels/port';
import { SessionEvent, sessionCodec, sessionStreamId } from '../sessions';
import { BillingLine, BillingRecord, recordView, segmentsOf } from './billing-line';
import { BILLING_RECORDS, BillingRecordDoc } from './billing.projection';

/** What is compared per line: where it starts and ends and what it costs. */
export type LineKey = { readonly from: string; readonly to: string; readonly amount: number };

export type BillingMismatch = {
  /** Position in both lists, each sorted by `from` then `to`. */
  readonly index: number;
  readonly problem: 'missing_record' | 'unexpected_record' | 'different';
  readonly recordId: string | null;
  readonly recorded: LineKey | null;
  readonly recomputed: LineKey | null;
};

/** API.md's verify shape plus `details`, the lines that disagree (empty when ok). */
export type Verification = {
  readonly sessionId: string;
  readonly recorded: number;
  readonly recomputed: number;
  readonly ok: boolean;
  readonly details: BillingMismatch[];
};

const byTime = (a: LineKey, b: LineKey): number =>
  Date.parse(a.from) - Date.parse(b.from) ||
  Date.parse(a.to) - Date.parse(b.to) ||
  a.amount - b.amount;

const keyOf = (line: LineKey): LineKey => ({ from: line.from, to: line.to, amount: line.amount });

const sameKey = (a: LineKey, b: LineKey): boolean =>
  Date.parse(a.from) === Date.parse(b.from) &&
  Date.parse(a.to) === Date.parse(b.to) &&
  a.amount === b.amount;

/**
 * Stored records against the lines recomputed from the session's events: ok only when the
 * sums agree and so does every line (same count, same from, to and amount, in time order).
 */
export const compareBilling = (
  sessionId: string,
  records: readonly BillingRecord[],
  lines: readonly BillingLine[],
): Verification => {
  const stored = [...records].sort(byTime);
  const expected = [...lines].sort(byTime);
  const details: BillingMismatch[] = [];
  for (let index = 0; index < Math.max(stored.length, expected.length); index++) {
    const r = stored[index];
    const l = expected[index];
    if (r && l && sameKey(r, l)) continue;
    details.push({
      index,
      problem: !r ? 'missing_record' : !l ? 'unexpected_record' : 'different',
      recordId: r?.recordId ?? null,
      recorded: r ? keyOf(r) : null,
      recomputed: l ? keyOf(l) : null,
    });
  }
  const recorded = stored.reduce((sum, r) => sum + r.amount, 0);
  const recomputed = expected.reduce((sum, l) => sum + l.amount, 0);
  return {
    sessionId,
    recorded,
    recomputed,
    ok: recorded === recomputed && !details.length,
    details,
  };
};

const PAGE = 1000;

export type SessionLog = {
  readonly events: SessionEvent[];
  /** From its SessionRequested; null when the stream holds none (no such session). */
  readonly owner: string | null;
  /** Global position of the stream's last event, 0 when the stream does not exist. */
  readonly lastPosition: LogPosition;
};

/** A session's events read straight from its stream (not from any read model). */
export const readSessionLog = async (store: EventStore, sessionId: string): Promise<SessionLog> => {
  const streamId = sessionStreamId(sessionId);
  const events: SessionEvent[] = [];
  let owner: string | null = null;
  let lastPosition = LOG_START;
  for (let from = 0; ;) {
    const page = await store.readStream(streamId, { fromRevision: from, limit: PAGE });
    for (const stored of page) {
      const event = sessionCodec.decode(stored.type, stored.data);
      lastPosition = laterPosition(lastPosition, stored.position);
      if (!event) continue;
      if (event.type === 'SessionRequested') owner ??= event.data.owner;
      events.push(event);
    }
    if (page.length < PAGE) break;
    from = page[page.length - 1].revision + 1;
  }
  return { events, owner, lastPosition };
};

/** Every stored record matching `filter`, by `from` then `_id` (all pages). */
export const recordsMatching = async (
  readModels: ReadModelStore,
  filter: Filter,
): Promise<BillingRecord[]> => {
  const docs = await findAll<BillingRecordDoc>(readModels, BILLING_RECORDS, filter, { from: 1 });
  return docs.map(recordView);
};

/** Verifies one session whose log has been read; the records are read here. */
export const verifySessionLog = async (
  readModels: ReadModelStore,
  sessionId: string,
  log: SessionLog,
): Promise<Verification> =>
  compareBilling(
    sessionId,
    await recordsMatching(readModels, { sessionId }),
    segmentsOf(log.events),
  );

/** Session ids in the order their streams first appear in the global log. */
export const sessionIdsInLog = async (store: EventStore): Promise<string[]> => {
  const types = sessionCodec.storedTypes();
  const seen = new Set<string>();
  for (let after = LOG_START; ;) {
    const page = await store.readAll({ after, limit: PAGE, types });
    for (const stored of page) {
      if (stored.streamId.startsWith('session-'))
        seen.add(stored.streamId.slice('session-'.length));
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].position;
  }
  return [...seen];
};

export type BillingAudit = {
  /** Every session verified, ok or not, in log order. */
  readonly sessions: Verification[];
  /** Sessions not verified because the read model has not reached their last event yet. */
  readonly behind: ReadonlyArray<{
    readonly sessionId: string;
    readonly lastPosition: LogPosition;
  }>;
  /** Records whose session has no stream in the log: nothing can explain them. */
  readonly orphans: BillingRecord[];
  readonly ok: boolean;
};

/**
 * Verifies every session found in the log (streams `session-*`) against the stored records,
 * and looks for records of sessions the log does not have. `readModelAt` is the billing
 * projection's checkpoint: sessions with events past it are reported as behind, not compared.
 */
export const auditBilling = async (
  store: EventStore,
  readModels: ReadModelStore,
  readModelAt: number = Number.POSITIVE_INFINITY,
): Promise<BillingAudit> => {
  const ids = await sessionIdsInLog(store);
  const sessions: Verification[] = [];
  const behind: Array<{ sessionId: string; lastPosition: LogPosition }> = [];
  for (const sessionId of ids) {
    const log = await readSessionLog(store, sessionId);
    if (log.lastPosition > readModelAt) behind.push({ sessionId, lastPosition: log.lastPosition });
    else sessions.push(await verifySessionLog(readModels, sessionId, log));
  }
  const known = new Set(ids);
  const orphans: BillingRecord[] = [];
  for await (const page of pagesOf<BillingRecordDoc>(readModels, BILLING_RECORDS, {})) {
    for (const doc of page) if (!known.has(doc.sessionId)) orphans.push(recordView(doc));
  }
  return {
    sessions,
    behind,
    orphans,
    ok: sessions.every((v) => v.ok) && orphans.length === 0,
  };
};
