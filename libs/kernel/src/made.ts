/**
 * A value made at once, or later: a caller that can use it at once waits no turn of the event
 * loop (a promise costs one even when already settled). Used where a fast path answers in
 * process and the plain path awaits a store.
 */
export type Made<T> = T | Promise<T>;

/** Whether `made` is still to come (a thenable: promises of another realm count too). */
export const isLater = <T>(made: Made<T>): made is Promise<T> =>
  typeof made === 'object' &&
  made !== null &&
  typeof (made as { then?: unknown }).then === 'function';

/** `then` for a value made at once or later: at once when it is, without a promise. */
export const thenMade = <T, U>(made: Made<T>, next: (value: T) => Made<U>): Made<U> =>
  isLater(made) ? made.then(next) : next(made);
