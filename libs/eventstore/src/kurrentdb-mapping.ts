import {
  ANY,
  Filter,
  InvalidArgumentError,
  JSONType,
  NO_STREAM,
  NotLeaderError,
  Position,
  ReadPosition,
  RecordedEvent,
  START,
  StreamDeletedError,
  StreamState,
  StreamTombstonedError,
  UnavailableError as ClientUnavailableError,
  UnknownError,
  eventTypeFilter,
  excludeSystemEvents,
} from '@kurrent/kurrentdb-client';
import { EventMetadata, UnavailableError } from '@fleet/kernel';
import { ExpectedRevision, LOG_START, LogPosition, StoredEvent } from './port';

// Between the client's vocabulary and the port's: positions, expected revisions, metadata,
// filters and errors.

/** A stream deleted in KurrentDB by hand: this app never deletes, so nothing it does can go on. */
export class StreamDeletedInStoreError extends Error {
  constructor(
    readonly streamId: string,
    override readonly cause: unknown,
  ) {
    super(
      `stream ${streamId} was deleted in KurrentDB (outside this app, which never deletes ` +
        'streams): it can be neither read nor appended to',
    );
    this.name = 'StreamDeletedInStoreError';
  }
}

export const STORE = 'event store (KurrentDB)';

/** Our position of an event: its commit position (equal to its prepare position, as we never write in explicit transactions). */
export const positionOf = (position: Position): LogPosition =>
  Number(position.commit) as LogPosition;

/** Where a read of the events after our `after` starts: at that event itself (reads include their start, so it is dropped). */
export const readFrom = (after: LogPosition | undefined): ReadPosition =>
  after === undefined || after === LOG_START
    ? START
    : { commit: BigInt(after), prepare: BigInt(after) };

export const isAt = (position: Position, from: ReadPosition): boolean =>
  typeof from === 'object' && position.commit === from.commit && position.prepare === from.prepare;

export const toStreamState = (expected: ExpectedRevision): StreamState =>
  expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : BigInt(expected);

/** What the server stores: ours, plus the keys its `$by_correlation_id` projection follows. */
export const serverMetadata = (metadata: EventMetadata): JSONType => ({
  ...metadata,
  $correlationId: metadata.correlationId,
  $causationId: metadata.causationId,
});

/** What the app wrote: the server's `$` keys left out. */
export const appMetadata = (stored: unknown): EventMetadata => {
  if (typeof stored !== 'object' || stored === null || stored instanceof Uint8Array) {
    return stored as EventMetadata;
  }
  return Object.fromEntries(
    Object.entries(stored).filter(([key]) => !key.startsWith('$')),
  ) as EventMetadata;
};

export const recordPosition = (e: RecordedEvent): LogPosition => {
  if (!e.position) {
    throw new Error(
      `KurrentDB returned event ${e.id} of ${e.streamId} without its log position: ` +
        'the server must be 22.6 or newer',
    );
  }
  return positionOf(e.position);
};

export const toStored = (e: RecordedEvent): StoredEvent => ({
  eventId: e.id,
  type: e.type,
  data: e.data,
  metadata: appMetadata(e.metadata),
  streamId: e.streamId,
  revision: Number(e.revision),
  position: recordPosition(e),
});

/** Events of `$`-streams the server's type filter let through (a system stream's own types). */
export const isSystemStream = (e: RecordedEvent): boolean => e.streamId.startsWith('$');

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The server-side filter of a read of `$all`: exactly these types, else every non-system one. */
export const serverFilter = (types: readonly string[] | undefined): Filter =>
  types
    ? eventTypeFilter({ regex: `^(?:${types.map(escapeRegex).join('|')})$` })
    : excludeSystemEvents();

/**
 * The server refuses a read from inside a record (gRPC INVALID_ARGUMENT, "Trying to read from
 * an invalid position."); the client's reader reports what it does not name as UnknownError.
 */
export const isInvalidPosition = (error: unknown): boolean =>
  error instanceof InvalidArgumentError ||
  (error instanceof UnknownError && /invalid position/i.test(error.message));

/** The client's errors as the port's callers know them; anything else as it came. */
export const storeFailure = (error: unknown, streamId?: string): unknown => {
  if (error instanceof StreamDeletedError || error instanceof StreamTombstonedError) {
    return new StreamDeletedInStoreError(streamId ?? 'unknown', error);
  }
  // Refused before anything was done: HTTP 503, and the caller may try again.
  if (error instanceof ClientUnavailableError || error instanceof NotLeaderError) {
    return new UnavailableError(STORE, error);
  }
  return error;
};
