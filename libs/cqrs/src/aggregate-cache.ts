/**
 * A bounded LRU of folded aggregate states keyed by stream. Entries carry the revision
 * they were folded to; the pipeline checks it against the store before trusting one.
 */
export type CachedState<S> = {
  readonly state: S;
  readonly revision: number;
  /** The global position of the stream's event at `revision`. */
  readonly position: number;
};

export class AggregateCache {
  private readonly entries = new Map<string, CachedState<unknown>>();

  constructor(private readonly capacity = 250_000) {}

  get<S>(streamId: string): CachedState<S> | undefined {
    const hit = this.entries.get(streamId);
    if (hit === undefined) return undefined;
    // Map keeps insertion order: re-inserting marks the entry as most recently used. Nothing is
    // evicted while the cache is at most half full, so a hit is not moved then (a Map delete and
    // insert per hit: a report of 100 unchanged nodes is 100 hits).
    if (this.entries.size > this.capacity / 2) {
      this.entries.delete(streamId);
      this.entries.set(streamId, hit);
    }
    return hit as CachedState<S>;
  }

  set<S>(streamId: string, entry: CachedState<S>): void {
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  invalidate(streamId: string): void {
    this.entries.delete(streamId);
  }

  get size(): number {
    return this.entries.size;
  }
}
