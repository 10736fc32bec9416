import { DomainError, EventMetadata, Made } from '@fleet/kernel';

/**
 * The event store port. Streams are `<category>-<id>`; revisions count from 0 within
 * a stream; positions order every event of every stream (the `$all` order) and only grow.
 */

declare const logPositionBrand: unique symbol;
/**
 * Where an event sits in the global log. Opaque: compare it (`<`, `>`, `===`), store it and send
 * it as it is, never add to it or subtract from it. KurrentDB's positions are byte offsets in its
 * log and the embedded store's are sparse, so arithmetic on them means nothing; the brand makes
 * the result of any arithmetic a plain number that no port call accepts.
 */
export type LogPosition = number & { readonly [logPositionBrand]: 'LogPosition' };

/** Before the first event: `readAll({ after: LOG_START })` reads from the beginning. */
export const LOG_START = 0 as LogPosition;

/** The later of two positions. */
export const laterPosition = (a: LogPosition, b: LogPosition): LogPosition => (a > b ? a : b);

/**
 * A position as a client sent it (the audit API's `fromPosition`, a checkpoint read back from a
 * store): trusted as it is; a store refuses one that is no event's position with
 * InvalidPositionError where it can tell.
 */
export const asLogPosition = (value: number): LogPosition => value as LogPosition;

export type ExpectedRevision =
  /** The stream must not exist yet (first registration, the upsert rule). */
  | 'no_stream'
  /** No check at all. */
  | 'any'
  /** The revision of the stream's last event, as read before deciding. */
  | number;

export type NewEvent = {
  readonly eventId: string;
  /** Versioned stored type name, e.g. `NodeCordoned.v1`. */
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
};

export type StoredEvent = NewEvent & {
  readonly streamId: string;
  readonly revision: number;
  readonly position: LogPosition;
};

export type AppendResult = {
  /** The stream's revision after the append (its last event's revision). */
  readonly revision: number;
  /** The global position of the last event written, or of the stream's head for a no-op. */
  readonly position: LogPosition;
  /** False when every event id was already stored: an idempotent replay appended nothing. */
  readonly appended: boolean;
};

export type ReadAllOptions = {
  /**
   * Exclusive: only events with a position greater than this. Omit to start at the beginning.
   * A position this store never handed out may be refused with InvalidPositionError.
   */
  readonly after?: LogPosition;
  readonly limit: number;
  /** Only events of these stored type names. */
  readonly types?: readonly string[];
};

export type ReadStreamOptions = {
  /** Inclusive. Defaults to 0. */
  readonly fromRevision?: number;
  readonly limit?: number;
};

export class ConcurrencyConflictError extends DomainError {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | null,
  ) {
    super(
      'concurrency_conflict',
      `stream ${streamId} is at revision ${actual ?? 'no_stream'}, expected ${expected}`,
      'conflict',
      { streamId, expected, actual },
    );
  }
}

/**
 * `readAll`'s `after` is no position of this log: positions are opaque, and KurrentDB refuses a
 * read from inside a record. Only positions read from events or results (or LOG_START) are valid.
 */
export class InvalidPositionError extends DomainError {
  constructor(
    readonly position: number,
    override readonly cause?: unknown,
  ) {
    super('invalid_position', `${position} is not a position of this event log`, 'invalid', {
      position,
    });
    this.name = 'InvalidPositionError';
  }
}

/** Some but not all of an append's event ids are stored already: a caller bug, never retried. */
export class IdempotencyMismatchError extends DomainError {
  constructor(readonly streamId: string) {
    super(
      'idempotency_mismatch',
      `stream ${streamId}: part of this append's event ids are stored already`,
      'conflict',
      { streamId },
    );
  }
}

/**
 * Fencing of the leader's periodic work: each leader records its lease term here (one
 * `LeadershipTaken.v1` with `data.epoch`) before its loops append, and an append whose events
 * carry `metadata.leaderEpoch` older than the newest epoch recorded is refused with
 * StaleLeaderError in the append's own transaction, so a leader that lost the lease cannot
 * write late, whatever the clocks and pauses (PostgreSQL and SQLite; KurrentDB does not check).
 */
export const LEADERSHIP_STREAM = 'leadership-terms';
export const LEADERSHIP_TAKEN = 'LeadershipTaken.v1';

/** The lease term an append is written in (its events' `metadata.leaderEpoch`), if any. */
export const fencingEpoch = (events: readonly NewEvent[]): number | undefined => {
  let epoch: number | undefined;
  for (const e of events) {
    const own = e.metadata.leaderEpoch;
    if (own !== undefined && (epoch === undefined || own > epoch)) epoch = own;
  }
  return epoch;
};

/** An append of a lease term older than the newest recorded: a stale leader's late write. */
export class StaleLeaderError extends DomainError {
  constructor(
    readonly streamId: string,
    readonly epoch: number,
    readonly newest: number | null,
  ) {
    super(
      'stale_leader',
      `stream ${streamId}: written in lease term ${epoch}, but term ${newest ?? 'newer'} leads`,
      'conflict',
      { streamId, epoch, newest },
    );
  }
}

export interface EventStore {
  /**
   * Appends atomically. Refuses with ConcurrencyConflictError (appending nothing) when the
   * stream is not at `expected`. Re-appending event ids that are all stored already in this
   * stream is a no-op that resolves with `appended: false`, whatever `expected` says.
   * Events carrying a `leaderEpoch` older than the newest in LEADERSHIP_STREAM are refused
   * with StaleLeaderError (appending nothing) by the stores that fence (see LEADERSHIP_STREAM).
   */
  append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult>;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** The revision of the stream's last event, or null when it does not exist. */
  streamRevision(streamId: string): Promise<number | null>;
  /**
   * Optional: `streamRevision` of many streams in one round trip, in the order asked; at once
   * (no promise) from a store that reads its heads without I/O (the embedded SQLite store).
   * Callers fall back to one `streamRevision` per stream where a store does not offer it.
   */
  streamRevisions?(streamIds: readonly string[]): Made<Array<number | null>>;
  /** Events in global commit order. */
  readAll(options: ReadAllOptions): Promise<StoredEvent[]>;
  /** The position of the newest event, LOG_START when the log is empty. */
  headPosition(): Promise<LogPosition>;
  /**
   * How many events lie after `after`, counted up to `cap` (an answer of `cap` means "at least").
   * Lag is measured with this, never by subtracting positions.
   */
  countAfter(after: LogPosition, cap: number): Promise<number>;
  /**
   * Calls `listener` (without arguments, possibly coalesced) whenever new events may be
   * readable. Readers then catch up with readAll from their own checkpoint, so a missed or
   * dropped notification costs latency, never an event. Returns the unsubscribe function.
   */
  watch(listener: () => void): () => void;
  /** Throws when the store cannot serve (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
