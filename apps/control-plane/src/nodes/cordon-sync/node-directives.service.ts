import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import {
  EventStore,
  LogPosition,
  StoredEvent,
  asLogPosition,
  laterPosition,
} from '@fleet/eventstore/port';
import { Doc, ReadModelStore, pagesOf } from '@fleet/readmodels/port';
import { EVENT_STORE, READ_MODELS } from '../../platform/runtime/tokens';
import { nodeAggregate } from '../node.aggregate';
import { nodeCodec, nodeStreamId } from '../node.events';
import { NODES, NodeDoc } from '../nodes.projection';
import { DirectiveNotifier } from './directive-notifier';

export type NodeDirective = {
  nodeId: string;
  hostname: string;
  desired: { unschedulable: boolean };
};

/** `position`: the global log position the answer covers, to resume after (sealed by the controller). */
export type DirectivePage = { items: NodeDirective[]; position: LogPosition };

/** The events that set a node's desired cordon state. */
const DIRECTIVE_TYPES = ['NodeCordoned', 'NodeUncordoned'] as const;
export const DIRECTIVE_STORED_TYPES: readonly string[] = nodeCodec
  .storedTypes()
  .filter((stored) => DIRECTIVE_TYPES.some((type) => stored.startsWith(`${type}.v`)));

const PAGE = 1000;
/** At most this many directive events per answer; the cursor then resumes after the last one. */
const MAX_EVENTS_PER_ANSWER = 10_000;
const NODES_PROJECTION_NAME = 'nodes';

type Identity = { clusterId: string; hostname: string };

/**
 * What each node of a cluster should look like in Kubernetes (`spec.unschedulable`), read
 * straight from the event log after a cursor, and a long-poll that is answered as soon as one
 * of them changes. The wake-up is this process's own tail of the log (EventStore.watch, then a
 * typed read of the new directive events), so it works on every API replica, needs no leader,
 * and costs one indexed read per burst of appends only while someone is waiting.
 */
@Injectable()
export class NodeDirectivesService
  implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger('node-directives');
  readonly notifier = new DirectiveNotifier();
  /** A node id is a function of (cluster, hostname), so its identity never changes: cached. */
  private readonly identities = new Map<string, Identity>();
  private unwatch: (() => void) | null = null;
  /** Log position up to which the tail has looked for directive events; null until needed. */
  private tailedTo: LogPosition | null = null;
  private tailing = false;
  private tailAgain = false;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
  ) {}

  onModuleInit(): void {
    this.unwatch = this.store.watch(() => this.onAppended());
  }

  /**
   * Nest closes the HTTP server (which waits for requests in flight) before
   * OnApplicationShutdown, so held long-polls are released on the first hook of app.close().
   */
  onModuleDestroy(): void {
    this.release();
  }

  beforeApplicationShutdown(): void {
    this.release();
  }

  onApplicationShutdown(): void {
    this.release();
  }

  private release(): void {
    this.unwatch?.();
    this.unwatch = null;
    this.notifier.closeAll();
  }

  /**
   * `since` null: every node of the cluster with its current desired state. Otherwise the
   * nodes whose desired state changed after the cursor, held up to `waitMs` while there are none.
   * A cursor ahead of the log (kept across a restore of the log from a backup) is answered as
   * none: held, it would wait for positions the log will reuse, blind to the changes there.
   */
  async poll(clusterId: string, since: LogPosition | null, waitMs: number): Promise<DirectivePage> {
    if (since === null || since > (await this.store.headPosition())) {
      return this.snapshot(clusterId);
    }
    const deadline = Date.now() + waitMs;
    let cursor = since;
    for (;;) {
      // Registered before reading: a change appended during the read still wakes us.
      const waiter = this.notifier.wait(clusterId, cursor, deadline - Date.now());
      let page: { items: NodeDirective[]; position: LogPosition };
      try {
        page = await this.changesSince(clusterId, cursor);
      } catch (error) {
        waiter.cancel();
        throw error;
      }
      cursor = page.position;
      if (page.items.length > 0) {
        waiter.cancel();
        return { items: page.items, position: cursor };
      }
      if ((await waiter.released) !== 'changed') return { items: [], position: cursor };
    }
  }

  /** Every node of the cluster; the position is the Nodes projection's checkpoint, read first. */
  private async snapshot(clusterId: string): Promise<DirectivePage> {
    // Read before the documents: they reflect at least this position, and a change between the
    // two is delivered again by the next poll (directives are idempotent).
    const checkpoint = asLogPosition(await this.readModels.checkpoint(NODES_PROJECTION_NAME));
    // Never past the log's head (read models kept while the log was restored to an older state).
    const head = await this.store.headPosition();
    const position = checkpoint < head ? checkpoint : head;
    const items: NodeDirective[] = [];
    const nodes = pagesOf<NodeDoc & Doc>(this.readModels, NODES, { clusterId }, { hostname: 1 });
    for await (const page of nodes) {
      for (const d of page) {
        this.identities.set(d.nodeId, { clusterId: d.clusterId, hostname: d.hostname });
        items.push({
          nodeId: d.nodeId,
          hostname: d.hostname,
          desired: { unschedulable: d.cordon.desired },
        });
      }
    }
    return { items, position };
  }

  /** The directive events after `since` (all clusters, few), narrowed to this cluster; last one per node wins. */
  private async changesSince(
    clusterId: string,
    since: LogPosition,
  ): Promise<{ items: NodeDirective[]; position: LogPosition }> {
    const latest = new Map<string, NodeDirective>();
    let position = since;
    for (let read = 0; read < MAX_EVENTS_PER_ANSWER; read += PAGE) {
      const events = await this.store.readAll({
        after: position,
        limit: PAGE,
        types: DIRECTIVE_STORED_TYPES,
      });
      for (const stored of events) {
        position = stored.position;
        const change = await this.directiveOf(stored);
        if (change && change.clusterId === clusterId) {
          latest.delete(change.directive.nodeId); // re-inserted: keeps change order
          latest.set(change.directive.nodeId, change.directive);
        }
      }
      if (events.length < PAGE) break;
    }
    return { items: [...latest.values()], position };
  }

  private async directiveOf(
    stored: StoredEvent,
  ): Promise<{ clusterId: string; directive: NodeDirective } | null> {
    const event = nodeCodec.decode(stored.type, stored.data);
    if (!event || (event.type !== 'NodeCordoned' && event.type !== 'NodeUncordoned')) return null;
    const nodeId = event.data.nodeId;
    const who = await this.identity(nodeId);
    if (!who) return null;
    return {
      clusterId: who.clusterId,
      directive: {
        nodeId,
        hostname: who.hostname,
        desired: { unschedulable: event.type === 'NodeCordoned' },
      },
    };
  }

  private async identity(nodeId: string): Promise<Identity | null> {
    const known = this.identities.get(nodeId);
    if (known) return known;
    const doc = await this.readModels.get<NodeDoc & Doc>(NODES, nodeId);
    let who: Identity | null = doc ? { clusterId: doc.clusterId, hostname: doc.hostname } : null;
    if (!who) {
      // Not (or no longer) on the Nodes screen: the stream still knows, even after deletion.
      const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(nodeId));
      who =
        state.status === 'absent' ? null : { clusterId: state.clusterId, hostname: state.hostname };
    }
    if (who) this.identities.set(nodeId, who);
    return who;
  }

  /** New events may be readable: wake the waiters of every cluster whose directives changed. */
  private onAppended(): void {
    if (this.notifier.size === 0) return; // nobody waits: each new waiter reads for itself
    if (this.tailing) {
      this.tailAgain = true;
      return;
    }
    this.tailing = true;
    void this.tail()
      .catch((error: unknown) => {
        // Waiters still answer at their timeout; the next append retries the tail.
        this.logger.warn(
          `directive tail: ${error instanceof Error ? error.message : String(error)}`,
        );
      })
      .finally(() => {
        this.tailing = false;
      });
  }

  private async tail(): Promise<void> {
    do {
      this.tailAgain = false;
      const from = this.tailedTo ?? this.notifier.oldestSince();
      if (from === null) return;
      // Nothing at or below the head read now can appear later, so the tail may skip to it.
      const head = await this.store.headPosition();
      let position = from;
      const changed = new Set<string>();
      for (;;) {
        const events = await this.store.readAll({
          after: position,
          limit: PAGE,
          types: DIRECTIVE_STORED_TYPES,
        });
        for (const stored of events) {
          position = stored.position;
          const change = await this.directiveOf(stored);
          if (change) changed.add(change.clusterId);
        }
        if (events.length < PAGE) break;
      }
      this.tailedTo = laterPosition(head, position);
      for (const clusterId of changed) this.notifier.wake(clusterId);
    } while (this.tailAgain && !this.notifier.closed);
  }
}
