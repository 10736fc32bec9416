import { DomainError, EventMetadata } from '../../kernel/src';

/**
 * The event store port. Streams are `<category>-<id>`; revisions count from 0 within
 * a stream; positions order every event of every stream (the `$all` order) and only grow.
 */
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
  readonly position: number;
};

export type AppendResult = {
  /** The stream's revision after the append (its last event's revision). */
  readonly revision: number;
  /** The global position of the last event written, or of the stream's head for a no-op. */
  readonly position: number;
  /** False when every event id was already stored: an idempotent replay appended nothing. */
  readonly appended: boolean;
};

export type ReadAllOptions = {
  /**
   * Exclusive: only events with a position greater than this. Omit to start at the beginning.
   * A position this store never handed out may be refused with InvalidPositionError.
   */
  readonly after?: number;
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
 * `readAll`'s `after` is no position of this log: positions are opaque, and KurrentDB refuses
 * a read from inside a record. Only positions read from events or results are valid.
 */
export class InvalidPositionError extends Error {
  constructor(
    readonly position: number,
    override readonly cause?: unknown,
  ) {
    super(`${position} is not a position of this event log`);
    this.name = 'InvalidPositionError';
  }
}

export interface EventStore {
  /**
   * Appends atomically. Refuses with ConcurrencyConflictError (appending nothing) when the
   * stream is not at `expected`. Re-appending event ids that are all stored already in this
   * stream is a no-op that resolves with `appended: false`, whatever `expected` says.
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
   * Optional: `streamRevision` of many streams in one round trip, in the order asked. Callers
   * fall back to one `streamRevision` per stream where a store does not offer it.
   */
  streamRevisions?(streamIds: readonly string[]): Promise<Array<number | null>>;
  /**
   * Optional: the same answer as `streamRevisions`, at once, from a store that reads its heads
   * without I/O (the embedded SQLite store): a caller deciding many no-ops waits no turn.
   */
  streamRevisionsNow?(streamIds: readonly string[]): Array<number | null>;
  /** Events in global commit order. */
  readAll(options: ReadAllOptions): Promise<StoredEvent[]>;
  /** The position of the newest event, 0 when the log is empty. */
  headPosition(): Promise<number>;
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
