import { uuidFrom } from '@fleet/kernel';

/** A UUIDv7, or an id whose first 8 bytes are one's (eventIdFor's version 8 over a v7 command id). */
const TIME_ORDERED = /^[0-9a-f]{8}-[0-9a-f]{4}-[78][0-9a-f]{3}-/i;

/** `derived` with `parent`'s first 8 bytes when `parent` is time-ordered, else `derived` as is. */
const timeOrderedLike = (parent: string, derived: string): string =>
  TIME_ORDERED.test(parent) ? parent.slice(0, 18) + derived.slice(18) : derived;

/**
 * The id of a command one step of a process issues on behalf of `parent` (a request's command
 * or an event): derived, so a retried step is the same command, and time-ordered like the
 * parent: its first 8 bytes (time and counter) are the parent's, the rest a hash of the step.
 * Event ids keep their command id's first 8 bytes (eventIdFor), so a placement's allocation and
 * start land at the right edge of the event_id index beside the request's own event, instead
 * of dirtying a random index page each in every group commit.
 */
export const stepCommandId = (parent: string, ...step: readonly string[]): string =>
  timeOrderedLike(parent, uuidFrom(parent, ...step));

/**
 * The id of the session a create command makes: derived from the command, so a retried create
 * (same Idempotency-Key, so the same SHA-1 command id) is the same session, as it always was.
 * Under a time-ordered command id (a create without a key, never retried as the same command)
 * it keeps that id's first 8 bytes too, so `session-<id>` streams are added at the right edge of
 * the stream index instead of on a random page (twice per placement: requested, started).
 */
export const sessionIdFor = (commandId: string): string =>
  timeOrderedLike(commandId, uuidFrom('session', commandId));
