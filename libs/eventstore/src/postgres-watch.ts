import { Client, ClientConfig } from 'pg';
import { ThrottledLog } from '@fleet/kernel/throttled-log';
import { EVENTS_CHANNEL } from './postgres-schema';
import { LOG_START, LogPosition } from './port';

const STORE = 'event store (PostgreSQL)';

export type PostgresWatchOptions = {
  /** A new connection's settings, for the LISTEN connection. */
  readonly clientConfig: () => ClientConfig;
  readonly headPosition: () => Promise<LogPosition>;
  /** Logs a background failure (throttled), `after` appended to the line. */
  readonly logFailure: (what: string, error: unknown, after?: string) => void;
  readonly errors: ThrottledLog;
  readonly pollMs: number;
  readonly relistenMs: number;
  readonly relistenMaxMs: number;
};

/**
 * Wakes the store's listeners on every NOTIFY of a commit that added events (one LISTEN
 * connection per store, re-established with a backoff when lost), after the store's own
 * commits, and when a poll of the head finds it moved (notifications lost with a connection).
 * Coalesced: one call per listener for a burst.
 */
export class PostgresWatch {
  private readonly listeners = new Set<() => void>();
  private closed = false;
  private wakeScheduled = false;
  private lastSeenHead: LogPosition = LOG_START;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private listen: Client | undefined;
  private listenTimer: NodeJS.Timeout | undefined;
  private listenBackoffMs: number;
  private listenDropped = false;

  constructor(private readonly options: PostgresWatchOptions) {
    this.listenBackoffMs = options.relistenMs;
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.closed) this.startWatching();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopWatching();
    };
  }

  /** The store's own commit reached `head`. */
  committed(head: LogPosition): void {
    if (head > this.lastSeenHead) this.lastSeenHead = head;
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stopWatching();
  }

  private startWatching(): void {
    if (!this.pollTimer) {
      this.pollTimer = setInterval(() => void this.poll(), this.options.pollMs);
      this.pollTimer.unref();
      void this.options
        .headPosition()
        .then((head) => {
          if (head > this.lastSeenHead) this.lastSeenHead = head;
        })
        .catch(() => undefined);
    }
    if (!this.listen && !this.listenTimer) this.connectListener();
  }

  private stopWatching(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    this.listenTimer = undefined;
    const client = this.listen;
    this.listen = undefined;
    void client?.end().catch(() => undefined);
  }

  private connectListener(): void {
    const client = new Client(this.options.clientConfig());
    this.listen = client;
    let lost = false;
    const onLost = (error: unknown): void => {
      if (lost) return;
      lost = true;
      void client.end().catch(() => undefined);
      if (this.listen !== client) return; // stopped on purpose
      this.listen = undefined;
      this.listenDropped = true;
      this.options.logFailure(
        'the LISTEN connection failed',
        error,
        `; listening again in ${this.listenBackoffMs} ms, polling meanwhile`,
      );
      this.listenTimer = setTimeout(() => {
        this.listenTimer = undefined;
        if (this.listeners.size > 0 && !this.closed) this.connectListener();
      }, this.listenBackoffMs);
      this.listenTimer.unref();
      this.listenBackoffMs = Math.min(this.listenBackoffMs * 2, this.options.relistenMaxMs);
      this.wake();
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the connection ended')));
    client.on('notification', () => this.wake());
    client
      .connect()
      .then(() => client.query(`LISTEN ${EVENTS_CHANNEL}`))
      .then(() => {
        if (lost || this.listen !== client) return;
        this.listenBackoffMs = this.options.relistenMs;
        if (this.listenDropped) {
          this.listenDropped = false;
          this.options.errors.clear();
          this.wake(); // commits made while nobody listened
        }
      })
      .catch(onLost);
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      const head = await this.options.headPosition();
      if (head > this.lastSeenHead) {
        this.lastSeenHead = head;
        this.wake();
      }
    } catch (error) {
      this.options.logFailure("polling the log's head failed", error);
    } finally {
      this.polling = false;
    }
  }

  private wake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.closed) return;
      for (const listener of [...this.listeners]) {
        try {
          listener();
        } catch (error) {
          // One failing listener must not starve the others; readers catch up from checkpoints.
          this.options.errors.failure(`${STORE}: a listener of new events threw`, error);
        }
      }
    });
  }
}
