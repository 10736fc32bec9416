/** Where a failure is written: a log line saying `message`, with the error's fields. */
export type FailureSink = (message: string, error: unknown) => void;

/** The sink when none is given (libraries used outside the app, scripts). */
export const consoleFailureSink: FailureSink = (message, error) => console.error(message, error);

/**
 * Logs a recurring failure once per window instead of once per occurrence: a Redis that is
 * down makes every connection and worker fail on each reconnect attempt (over a hundred
 * lines a second), which buries everything else in the log. The first occurrence of a key
 * is logged at once; repeats within `windowMs` are counted, and the next one logged after
 * the window says how many were left out.
 */
export class ThrottledLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly sink: FailureSink,
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** `key` groups occurrences of the same failure (e.g. its error code). */
  log(key: string, message: string, error: unknown): void {
    const at = this.now();
    const seen = this.last.get(key);
    if (seen && at - seen.at < this.windowMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.set(key, { at, suppressed: 0 });
    this.sink(
      suppressed > 0
        ? `${message} (and ${suppressed} more like it since the last report)`
        : message,
      error,
    );
  }

  /** An error, grouped by its code (or message): the usual key for connection failures. */
  failure(message: string, error: unknown): void {
    const e = error as { code?: unknown; message?: unknown } | null;
    this.log(String(e?.code ?? e?.message ?? error), message, error);
  }

  /** The failure is over (e.g. reconnected): its next occurrence is logged at once. */
  clear(key?: string): void {
    if (key === undefined) this.last.clear();
    else this.last.delete(key);
  }
}
