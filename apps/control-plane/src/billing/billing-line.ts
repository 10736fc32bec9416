import { assertNever } from '@fleet/kernel';
import { priceSegment } from './billing-arithmetic';
import { Placement, SessionEvent } from '../sessions';

/** One closed running segment of a session, priced at the rate fixed when it opened. */
export type BillingLine = {
  readonly sessionId: string;
  readonly owner: string;
  readonly nodeId: string;
  readonly hostname: string;
  readonly gpuUuids: readonly string[];
  /** Null for a CPU session. */
  readonly gpuModel: string | null;
  readonly from: string;
  readonly to: string;
  readonly seconds: number;
  readonly unitPricePerHour: number;
  readonly amount: number;
  readonly currency: string;
  /** Cards (GPU) or vCPUs (CPU) billed: amount = round_half_up(ms × units × price / 3.6e6). */
  readonly units: number;
};

/** A billing record as stored and served: a line and the id of the event that closed it. */
export type BillingRecord = BillingLine & { readonly recordId: string };

/** API.md's Record fields (and `units`, an addition), in the order the API shows them. */
export const RECORD_FIELDS = [
  'recordId',
  'sessionId',
  'owner',
  'nodeId',
  'hostname',
  'gpuUuids',
  'gpuModel',
  'from',
  'to',
  'seconds',
  'unitPricePerHour',
  'amount',
  'currency',
  'units',
] as const satisfies ReadonlyArray<keyof BillingRecord>;

export type OpenSegment = { readonly placement: Placement; readonly from: string };

/** What billing remembers of one session between its events. */
export type BillingState = {
  readonly owner: string | null;
  /** The running segment, null while queued, paused or terminated. */
  readonly open: OpenSegment | null;
};

export const initialBillingState = (): BillingState => ({ owner: null, open: null });

/** Stored times as toISOString() gives them, so string order is time order in queries. */
const canonical = (time: string): string => new Date(Date.parse(time)).toISOString();

export const closeSegment = (
  sessionId: string,
  owner: string | null,
  open: OpenSegment,
  to: string,
): BillingLine => {
  const { placement } = open;
  const from = canonical(open.from);
  // Never before the segment began (the decider guarantees it; an odd log must not bill negative time).
  const end = Date.parse(to) < Date.parse(from) ? from : canonical(to);
  const segment = priceSegment(from, end, placement.units, placement.unitPricePerHour);
  return {
    sessionId,
    owner: owner ?? '',
    nodeId: placement.nodeId,
    hostname: placement.hostname,
    gpuUuids: [...placement.gpus],
    gpuModel: placement.gpuModel,
    from: segment.from,
    to: segment.to,
    seconds: segment.seconds,
    unitPricePerHour: placement.unitPricePerHour,
    amount: segment.amount,
    currency: placement.currency,
    units: placement.units,
  };
};

/**
 * One session event applied to billing: the new state and the line it closed, if any. The
 * projection and the auditor's recomputation both run this, so they cannot disagree on rules.
 * Start/resume opens a segment at `at`; pause closes it at `at`; termination closes it at
 * `endedAt` only if one is open (a paused or queued session has nothing running).
 */
export const billingStep = (
  state: BillingState,
  event: SessionEvent,
): { state: BillingState; closed: BillingLine | null } => {
  const close = (to: string): BillingLine | null =>
    state.open ? closeSegment(event.data.sessionId, state.owner, state.open, to) : null;
  switch (event.type) {
    case 'SessionRequested':
      return { state: { ...state, owner: event.data.owner }, closed: null };
    case 'SessionStarted':
    case 'SessionResumed': {
      const { sessionId: _s, at, ...placement } = event.data;
      // A segment still open ran until this placement replaced it (the decider never does that).
      return { state: { ...state, open: { placement, from: at } }, closed: close(at) };
    }
    case 'SessionPaused':
      return { state: { ...state, open: null }, closed: close(event.data.at) };
    case 'SessionResumeRequested':
      return { state, closed: null };
    case 'SessionTerminated':
      return { state: { ...state, open: null }, closed: close(event.data.endedAt) };
    default:
      return assertNever(event, 'session event');
  }
};

/** Every closed running segment of a session, in order; a segment still open is not a line. */
export const segmentsOf = (events: readonly SessionEvent[]): BillingLine[] => {
  const lines: BillingLine[] = [];
  let state = initialBillingState();
  for (const event of events) {
    const step = billingStep(state, event);
    state = step.state;
    if (step.closed) lines.push(step.closed);
  }
  return lines;
};

export const toBillingRecord = (recordId: string, line: BillingLine): BillingRecord => ({
  recordId,
  ...line,
});

/** Exactly the served fields of a stored document (drops `_id` and anything else). */
export const recordView = (doc: Readonly<Record<string, unknown>>): BillingRecord =>
  Object.fromEntries(RECORD_FIELDS.map((f) => [f, doc[f]])) as BillingRecord;
