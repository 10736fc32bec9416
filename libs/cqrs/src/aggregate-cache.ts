import { LogPosition } from '@fleet/eventstore/port';

/**
 * A bounded LRU of folded aggregate states keyed by stream. Entries carry the revision
 * they were folded to; the pipeline checks it against the store before trusting one.
 */
export type CachedState<S> = {
  readonly state: S;
  readonly revision: number;
  /** The global position of the stream's event at `revision`. */
  readonly position: LogPosition;
};

/** One aggregate's fold of a stream, and the next aggregate folding the same stream. */
type Fold = { readonly aggregate: string; entry: CachedState<unknown>; other: Fold | undefined };

export class AggregateCache {
  /**
   * By stream id, then by aggregate: two deciders may fold one stream (a cluster's lifecycle
   * and its liveness), nearly every stream has one. Keyed by the stream id as the caller gives
   * it, with no key built per lookup: a stream id string its caller keeps (a node's, from
   * `NodeRefs`) keeps its hash, and finds its entry by identity. Insertion order is recency.
   */
  private readonly streams = new Map<string, Fold>();
  private folds = 0;

  constructor(private readonly capacity = 250_000) {}

  get<S>(aggregate: string, streamId: string): CachedState<S> | undefined {
    const first = this.streams.get(streamId);
    let fold = first;
    while (fold !== undefined && fold.aggregate !== aggregate) fold = fold.other;
    if (fold === undefined) return undefined;
    // Map keeps insertion order: re-inserting marks the stream as most recently used. Nothing is
    // evicted while the cache is at most half full, so a hit is not moved then (a Map delete and
    // insert per hit: a report of 100 unchanged nodes is 100 hits).
    if (this.folds > this.capacity / 2) {
      this.streams.delete(streamId);
      this.streams.set(streamId, first!);
    }
    return fold.entry as CachedState<S>;
  }

  set<S>(aggregate: string, streamId: string, entry: CachedState<S>): void {
    let first = this.streams.get(streamId);
    let fold = first;
    while (fold !== undefined && fold.aggregate !== aggregate) fold = fold.other;
    if (fold !== undefined) {
      fold.entry = entry;
    } else {
      first = { aggregate, entry, other: first };
      this.folds++;
    }
    this.streams.delete(streamId);
    this.streams.set(streamId, first!);
    while (this.folds > this.capacity) {
      const oldest = this.streams.entries().next().value;
      if (oldest === undefined) break;
      this.streams.delete(oldest[0]);
      for (let f: Fold | undefined = oldest[1]; f !== undefined; f = f.other) this.folds--;
    }
  }

  invalidate(aggregate: string, streamId: string): void {
    const first = this.streams.get(streamId);
    if (first === undefined) return;
    if (first.aggregate === aggregate) {
      this.folds--;
      // Map.set on a key it holds keeps the key's place in the order.
      if (first.other === undefined) this.streams.delete(streamId);
      else this.streams.set(streamId, first.other);
      return;
    }
    for (let before = first, f = first.other; f !== undefined; before = f, f = f.other) {
      if (f.aggregate === aggregate) {
        before.other = f.other;
        this.folds--;
        return;
      }
    }
  }

  /** Folds held (a stream folded by two aggregates counts twice). */
  get size(): number {
    return this.folds;
  }
}
