import { Made } from '@fleet/kernel';
import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  LOG_START,
  LogPosition,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
} from './port';

/** Events fetched past the window's end per read. */
const PAGE = 1000;

/**
 * An event store whose `readAll` (without a type filter) serves readers that follow the head
 * from one window of recent events: every projection and reactor reads the same new events
 * after each append, and each used to fetch and parse them on its own. The window holds
 * every event of the log in (start, end] (the log is read in position order and only ever
 * grows at its end), so a read inside it returns exactly what the store would. Readers
 * behind the window, and typed reads, go to the store. Events are shared between readers:
 * they are read-only, as the port's types say. While nothing was notified since the window
 * last reached the head, a read that the window answers does not ask the store for more: new
 * events are always followed by a notification (the port's promise), and readers read again
 * when it comes.
 */
export class SharedReadsEventStore implements EventStore {
  private window: StoredEvent[] = [];
  /** Whether a window is held; its exclusive start and inclusive end positions. */
  private held = false;
  private start: LogPosition = LOG_START;
  private end: LogPosition = LOG_START;
  /** Notifications seen (bumped before readers are told), and the count when the window last reached the head. */
  private notified = 0;
  private headAt = -1;
  private watching = false;
  private pending: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly capacity = 10_000,
  ) {}

  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    const after = options.after ?? LOG_START;
    if (options.types !== undefined || !this.held || after < this.start || after > this.end) {
      const generation = this.notified;
      const page = await this.store.readAll(options);
      if (options.types === undefined) this.restart(after, page, options.limit, generation);
      return page;
    }
    for (;;) {
      const generation = this.notified;
      const out: StoredEvent[] = [];
      for (
        let i = this.firstAfter(after);
        i < this.window.length && out.length < options.limit;
        i++
      )
        out.push(this.window[i]);
      if (out.length === options.limit || (this.watching && this.headAt === generation)) return out;
      if (after < this.start) return this.readAll(options); // trimmed meanwhile
      // One read past the window's end at a time, shared by every reader that wants it.
      this.pending ??= this.fetch().finally(() => (this.pending = null));
      await this.pending;
      if (!this.watching) {
        // Without notifications nothing tells when the window is at the head: one read each.
        const rest: StoredEvent[] = [];
        for (
          let i = this.firstAfter(after);
          i < this.window.length && rest.length < options.limit;
          i++
        )
          rest.push(this.window[i]);
        return rest;
      }
    }
  }

  private async fetch(): Promise<void> {
    const generation = this.notified;
    const from = this.end;
    const page = await this.store.readAll({ after: from, limit: PAGE });
    this.extend(from, page, PAGE, generation);
  }

  /** A read from outside the window starts a new one when it reached the head. */
  private restart(
    after: LogPosition,
    page: StoredEvent[],
    limit: number,
    generation: number,
  ): void {
    if (page.length >= limit) return; // not at the head yet: catching up, not worth keeping
    if (this.held && after >= this.start && after <= this.end) return; // already covered
    this.held = true;
    this.window = page.slice();
    this.start = after;
    this.end = page.length > 0 ? page[page.length - 1].position : after;
    this.headAt = generation;
  }

  private extend(from: LogPosition, page: StoredEvent[], limit: number, generation: number): void {
    // Only a read continuing exactly at the window's end keeps it complete.
    if (from !== this.end) return;
    if (page.length < limit) this.headAt = generation;
    if (page.length === 0) return;
    for (const e of page) this.window.push(e);
    this.end = page[page.length - 1].position;
    const excess = this.window.length - this.capacity;
    if (excess > 0) {
      this.start = this.window[excess - 1].position;
      this.window = this.window.slice(excess);
    }
  }

  private firstAfter(position: LogPosition): number {
    let lo = 0;
    let hi = this.window.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.window[mid].position <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    return this.store.append(streamId, events, expected);
  }

  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    return this.store.readStream(streamId, options);
  }

  streamRevision(streamId: string): Promise<number | null> {
    return this.store.streamRevision(streamId);
  }

  streamRevisions(streamIds: readonly string[]): Made<Array<number | null>> {
    if (this.store.streamRevisions) return this.store.streamRevisions(streamIds);
    return Promise.all(streamIds.map((id) => this.store.streamRevision(id)));
  }

  headPosition(): Promise<LogPosition> {
    return this.store.headPosition();
  }

  countAfter(after: LogPosition, cap: number): Promise<number> {
    return this.store.countAfter(after, cap);
  }

  watch(listener: () => void): () => void {
    this.watching = true;
    return this.store.watch(() => {
      this.notified++;
      listener();
    });
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
