import { Made, Message, Turns, isLater } from '@fleet/kernel';
import { EventStore, LOG_START } from '@fleet/eventstore/port';
import { AggregateCache, CachedState } from './aggregate-cache';
import type { Aggregate, CommandResult, PipelineObserver } from './command-pipeline';

type Outcome = Parameters<PipelineObserver>[0];

/**
 * The command pipeline's one tuning. Most commands change nothing (the report of unchanged
 * nodes, the cordon of a cordoned node): such a command is answered from the cached state,
 * without taking its stream's turn, when nothing is in flight on the stream in this process,
 * its cached state decides no events, and the store's head confirms that state is current.
 * That is the answer the plain path (load, decide, nothing to append) gives. Anything else
 * (busy, not cached, refused, events to append, a head another writer moved) is the plain
 * path's. Deciders never learn of it; `noop-fast-path.int.spec.ts` holds its answers to the
 * plain path's.
 */
export class NoopFastPath {
  constructor(
    private readonly store: EventStore,
    private readonly cache: AggregateCache,
    private readonly turns: Turns,
    private readonly observe: (outcome: Outcome) => void,
  ) {}

  /**
   * One command (an admin's): undefined when the plain path must decide it; else its no-op
   * result, or undefined if the store's head has moved past the cached state. At once from a
   * store that reads its heads in process; a promise otherwise, which the caller awaits in the
   * stream's turn (taken at once), so that commands sent after this one stay after it.
   */
  one<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
  ): Made<CommandResult<E, S> | undefined> | undefined {
    const started = performance.now();
    const cached = this.candidate(aggregate, streamId, command);
    if (cached === undefined) return undefined;
    const settle = (head: number | null): CommandResult<E, S> | undefined => {
      if (head !== cached.revision) return undefined;
      this.report(aggregate.name, command.type, started, 'noop');
      return noopOf<E, S>(cached);
    };
    // The store out of reach: counted as the plain path counts it.
    const failed = (error: unknown): never => {
      this.report(aggregate.name, command.type, started, 'error');
      throw error;
    };
    try {
      const heads = this.heads([streamId]);
      return isLater(heads) ? heads.then((h) => settle(h[0]), failed) : settle(heads[0]);
    } catch (error) {
      return Promise.reject(error).catch(failed);
    }
  }

  /**
   * Many commands (`commands[i]` on `streamIds[i]`: a report of many nodes) in one pass: the
   * no-op result where this path answers, undefined where the plain path must decide. At once
   * (no promise) from a store that reads its heads in process. The pass's no-ops are reported
   * once per command type, with their count.
   */
  many<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamIds: readonly string[],
    commands: readonly C[],
  ): Made<Array<CommandResult<E, S> | undefined>> {
    const started = performance.now();
    const out = new Array<CommandResult<E, S> | undefined>(streamIds.length);
    const at: number[] = [];
    const states: Array<CachedState<S>> = [];
    for (let i = 0; i < streamIds.length; i++) {
      const cached = this.candidate(aggregate, streamIds[i], commands[i]);
      if (cached === undefined) continue;
      at.push(i);
      states.push(cached);
    }
    if (at.length === 0) return out;
    const asked = at.length === streamIds.length ? streamIds : at.map((i) => streamIds[i]);
    const settle = (heads: ReadonlyArray<number | null>) => {
      // No-ops by command type: one outcome per type for the whole pass.
      let noops: Map<string, number> | undefined;
      for (let k = 0; k < at.length; k++) {
        if (heads[k] !== states[k].revision) continue;
        const type = commands[at[k]].type;
        (noops ??= new Map()).set(type, (noops.get(type) ?? 0) + 1);
        out[at[k]] = noopOf<E, S>(states[k]);
      }
      if (noops) {
        const ms = performance.now() - started;
        for (const [command, count] of noops)
          this.observe({
            aggregate: aggregate.name,
            command,
            ms,
            result: 'noop',
            events: 0,
            count,
          });
      }
      return out;
    };
    const heads = this.heads(asked);
    return isLater(heads) ? heads.then(settle) : settle(heads);
  }

  /** The cached state `command` would be a no-op on, if the stream is idle here and cached. */
  private candidate<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
  ): CachedState<S> | undefined {
    if (this.turns.busy(streamId)) return undefined;
    const cached = this.cache.get<S>(aggregate.name, streamId);
    if (cached === undefined) return undefined;
    try {
      return aggregate.decider.decide(command, cached.state).length === 0 ? cached : undefined;
    } catch {
      // A refusal is the plain path's to report.
      return undefined;
    }
  }

  private heads(streamIds: readonly string[]): Made<ReadonlyArray<number | null>> {
    if (this.store.streamRevisions) return this.store.streamRevisions(streamIds);
    return Promise.all(streamIds.map((id) => this.store.streamRevision(id)));
  }

  private report(aggregate: string, command: string, started: number, result: 'noop' | 'error') {
    this.observe({ aggregate, command, ms: performance.now() - started, result, events: 0 });
  }
}

/** What the plain path answers for a command that changed nothing on `cached`. */
const noopOf = <E, S>(cached: CachedState<S>): CommandResult<E, S> => ({
  events: [],
  state: cached.state,
  revision: cached.revision,
  appended: false,
  position: LOG_START,
  headPosition: cached.position,
});
