import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline, CommandResult, SubscriptionRunner } from '../../../../libs/cqrs/src';
import {
  CommandContext,
  DomainError,
  KeyLocks,
  Turns,
  UnavailableError,
  isoTime,
  uuidFrom,
} from '../../../../libs/kernel/src';
import { LOG_START, laterPosition } from '../../../../libs/eventstore/src/port';
import { Doc, ReadModelStore, pagesOf } from '../../../../libs/readmodels/src/port';
import { READ_MODELS } from '../platform/runtime/tokens';
import { LivenessSaga } from './liveness/liveness.saga';
import { HEARTBEATS } from './heartbeat/heartbeat.module';
import { Beat, Heartbeat, HeartbeatStore, laterObserved } from './heartbeat/heartbeat.store';
import { NodeCommand, NodeReport, displayStatus, isOutOfOrder } from './node.decider';
import { NodeRef, nodeAggregate, nodeRefOf } from './node.aggregate';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';
import { NODES, NodeDoc } from './nodes.projection';
import { NODES_PROJECTION } from './nodes.commands';

export type ReportedNode = {
  hostname: string;
  nodeId: string;
  status: 'ready' | 'busy' | 'cordoned' | 'offline';
  desired: { unschedulable: boolean };
};

/** Whether a node of the report would change and carries cards, so may take a card. */
const mayClaimCards = (
  reports: readonly NodeReport[],
  noops: ReadonlyArray<unknown | undefined>,
): boolean => {
  for (let i = 0; i < reports.length; i++)
    if (noops[i] === undefined && reports[i].gpus.length > 0) return true;
  return false;
};

/** Whether every node of the report was decided as a no-op (`decideNoops`). */
const allDecided = <T>(noops: ReadonlyArray<T | undefined>): noops is readonly T[] => {
  for (let i = 0; i < noops.length; i++) if (noops[i] === undefined) return false;
  return true;
};

/** Up to this many new cards, their holders are looked up by uuid; past it, the cluster is read. */
const MAX_CARDS_BY_UUID = 256;

const toIso = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/**
 * ReportInventory: each node of a report is upserted by (cluster, hostname). Changes append
 * events; a report that changes nothing only refreshes the heartbeat store: no event, and
 * nothing written to the job queue.
 */
@Injectable()
export class InventoryService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(LivenessSaga) private readonly liveness: LivenessSaga,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
  ) {}

  private readonly logger = new Logger('inventory');

  /** Per cluster, reports that may claim GPU cards: one at a time. */
  private readonly claiming = new Turns();

  /**
   * Nodes whose report is between reading their heartbeats and writing its sightings. The
   * heartbeat holds the newest observedAt seen, no-op reports included: a second report of a
   * node decided before the first wrote it was decided against a stale newest, and an older
   * report could be applied after a newer one (taking a Ready node offline).
   */
  private readonly reporting = new KeyLocks();

  async report(
    clusterId: string,
    reports: readonly NodeReport[],
    ctx: CommandContext,
  ): Promise<ReportedNode[]> {
    const receivedAt = isoTime(ctx.now.getTime());
    const refs = reports.map((r) => nodeRefOf(clusterId, r.hostname));
    const nodeIds = refs.map((ref) => ref.nodeId);
    // Taken at once when no report of these nodes is in flight (the common case): no promise.
    if (!this.reporting.tryTake(nodeIds)) await this.reporting.take(nodeIds);
    const results: ReportedNode[] = new Array<ReportedNode>(reports.length);
    try {
      // From a store in this process (the embedded one) and the cached states, a report that
      // changes nothing is decided without awaiting a promise: each costs a turn of the loop.
      const read = this.heartbeats.getNow?.(nodeIds) ?? this.newestOf(nodeIds, reports);
      const beats = Array.isArray(read) ? read : await read;
      const newest = beats.map((b) => toIso(b?.observedAt ?? null));
      const commands: NodeCommand[] = reports.map((report, i) => ({
        type: 'ReportNode',
        data: { nodeId: nodeIds[i], report, receivedAt, newestObservedAt: newest[i] },
      }));
      const streamIds = refs.map((ref) => ref.streamId);
      // The common report changes nothing: decided in one pass on the cached states, without a
      // queued command per node. Whatever would append (or is not cached) takes the pipeline.
      const noops =
        this.pipeline.decideNoopsNow(nodeAggregate, streamIds, commands) ??
        (await this.pipeline.decideNoops(nodeAggregate, streamIds, commands));
      const fresh: Beat[] = [];
      const settle = (i: number, result: CommandResult<NodeEvent, NodeState>): void => {
        const report = reports[i];
        const nodeId = nodeIds[i];
        // Every report is a sighting at its receive time, an out-of-order one too (it changes
        // nothing, but the controller reached us now); the newest observedAt stays the newest.
        const reported = report.observedAt ? Date.parse(report.observedAt) : null;
        const observedAt = laterObserved(beats[i]?.observedAt ?? null, reported);
        fresh.push({ nodeId, seenAt: ctx.now.getTime(), observedAt });
        const state = result.state;
        results[i] = {
          hostname: report.hostname,
          nodeId,
          status: displayStatus(state) ?? 'offline',
          desired: {
            unschedulable:
              state.status === 'online' || state.status === 'offline'
                ? state.cordon.desired
                : false,
          },
        };
      };
      let lastPosition = LOG_START;
      const apply = async (): Promise<void> => {
        await this.refuseCardsHeldElsewhere(clusterId, reports, refs, newest, noops);
        // No promise per no-op node: only the nodes that take the pipeline are awaited.
        const handled: Array<Promise<void>> = [];
        for (let i = 0; i < reports.length; i++) {
          const noop = noops[i];
          if (noop !== undefined) {
            settle(i, noop);
            continue;
          }
          handled.push(
            this.pipeline
              .handle(
                nodeAggregate,
                streamIds[i],
                commands[i],
                // One command per node, its id derived from the request's, so a replayed report appends nothing.
                { ...ctx, commandId: uuidFrom(ctx.commandId, nodeIds[i]) },
              )
              .then((result) => {
                lastPosition = laterPosition(lastPosition, result.position);
                settle(i, result);
              }),
          );
        }
        await Promise.all(handled);
      };
      const changes = !allDecided(noops);
      // A report that changes something is recorded only while its sightings can be: a remote
      // heartbeat store answers first (one round trip, on the rare changing report), so with
      // Redis out of reach it is refused (503) with nothing appended.
      if (changes && !this.heartbeats.touchNow) await this.heartbeats.ping();
      if (!changes) {
        // Nothing to append (the common report): settled here, no pipeline and no card check.
        for (let i = 0; i < reports.length; i++) settle(i, noops[i]);
      } else if (mayClaimCards(reports, noops)) {
        // The card check reads the Nodes read model: the next claiming report of this cluster
        // waits until this one's cards show there, so two concurrent reports cannot both take
        // one uuid for two nodes (in this process; the check stays a read for other replicas).
        await this.claiming.run(clusterId, async () => {
          await apply();
          await this.runner.settle(lastPosition, [NODES_PROJECTION]);
        });
      } else {
        await apply();
      }
      try {
        // What a report waits for: its changes appended (above), and its nodes' newest
        // heartbeats read where its order needs them (`newestOf`); not its sightings' write
        // to Redis while the store is writing (`touchLater`): they are in this process's reads
        // at once, so this process's next report of a node is ordered after this one, and a
        // sighting lost with Redis only dates a node that fell silent meanwhile one report
        // earlier (docs/ARCHITECTURE.md, "Nodes and liveness").
        if (this.heartbeats.touchNow) this.heartbeats.touchNow(fresh);
        else if (!this.heartbeats.touchLater?.(fresh)) await this.heartbeats.touch(fresh);
      } catch (error) {
        // Redis went away after the report's changes were appended: they are done, and a 503
        // ("nothing was done") would be false. Only the sightings are lost; the nodes' recorded
        // changes are what liveness counts from until they report again.
        if (!(error instanceof UnavailableError) || lastPosition === 0) throw error;
        this.logger.warn(
          `report of ${reports.length} node(s) in ${clusterId} recorded, sightings not: ${error.message}`,
        );
      }
    } finally {
      this.reporting.release(nodeIds);
    }
    // A stall of these nodes ends when they report: the cluster's liveness stream is read
    // unless it was found reporting just now (one read a second, not one a report).
    if (this.liveness.mayBeStalled(clusterId)) {
      await this.liveness.reportsArrived(clusterId, nodeIds, ctx);
    }
    return results;
  }

  /**
   * The heartbeats a report's decision needs, from a store out of process: only a node
   * reported with an observedAt can be out of order (`isOutOfOrder`; a report without one is
   * ordered by its receive time), so only those nodes' newest observedAt is read. A report
   * of none of them reads nothing, and is answered without waiting on the store. The others
   * are null: their sightings keep the store's newest observedAt (`touch` keeps the later).
   */
  private newestOf(
    nodeIds: readonly string[],
    reports: readonly NodeReport[],
  ): Array<Heartbeat | null> | Promise<Array<Heartbeat | null>> {
    let ordered = 0;
    for (const r of reports) if (r.observedAt !== null) ordered++;
    if (ordered === reports.length) return this.heartbeats.get(nodeIds);
    const none = new Array<Heartbeat | null>(reports.length).fill(null);
    if (ordered === 0) return none;
    const ids: string[] = [];
    for (let i = 0; i < reports.length; i++)
      if (reports[i].observedAt !== null) ids.push(nodeIds[i]);
    return this.heartbeats.get(ids).then((read) => {
      for (let i = 0, k = 0; i < reports.length; i++) {
        if (reports[i].observedAt !== null) none[i] = read[k++];
      }
      return none;
    });
  }

  /**
   * A GPU uuid is one card: refuses the whole report (before anything is appended) when a node
   * of it would take a card another node of the same cluster holds. Per cluster on purpose, so
   * another cluster's operator cannot block these reports by claiming their uuids. Only the
   * nodes that would change are checked (no-ops already hold their cards), and only for cards
   * they do not hold yet: a node re-reporting its own cards is never refused.
   *
   * The read model finds the candidate holders and the node's stream confirms each (the read
   * model may lag a release or a deletion). A holder in this same report that no longer lists
   * the card releases it here: a card moved between two nodes is reported in one go, unless a
   * session still holds it where it was (held by a session, a card is held by its node until
   * the session ends, whatever the node lists). Reports
   * that may claim cards run one at a time per cluster, each until the read model shows its
   * cards (`report`); across replicas of the control plane the check remains a read.
   */
  private async refuseCardsHeldElsewhere(
    clusterId: string,
    reports: readonly NodeReport[],
    refs: readonly NodeRef[],
    newest: ReadonlyArray<string | null>,
    noops: ReadonlyArray<CommandResult<NodeEvent, NodeState> | undefined>,
  ): Promise<void> {
    const changing: number[] = [];
    for (let i = 0; i < reports.length; i++)
      if (noops[i] === undefined && reports[i].gpus.length > 0) changing.push(i);
    if (changing.length === 0) return;
    const states = await Promise.all(
      changing.map(async (i) => (await this.pipeline.load(nodeAggregate, refs[i].streamId)).state),
    );
    /** uuid → the report's node taking it (the controller made each uuid one node's). */
    const claims = new Map<string, number>();
    changing.forEach((i, c) => {
      const state = states[c];
      const known = state.status === 'online' || state.status === 'offline';
      if (known && isOutOfOrder(reports[i], state, newest[i])) return; // changes nothing
      const held = new Set(known ? state.gpus.map((g) => g.uuid) : []);
      for (const g of reports[i].gpus) if (!held.has(g.uuid)) claims.set(g.uuid, i);
    });
    if (claims.size === 0) return;
    const inReport = new Map(refs.map((ref, j) => [ref.nodeId, j]));
    // The holder's stream has the last word: the read model may not show a release or a deletion yet.
    const stillHeld = async (uuid: string, holderId: string): Promise<boolean> => {
      const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(holderId));
      if (state.status !== 'online' && state.status !== 'offline') return false; // deleted
      // A session holding it: in use there, whatever that node lists (a card does not move
      // while a session runs on it; taken here, two sessions held one card).
      if (Object.values(state.allocations).some((a) => a.gpus.includes(uuid))) return true;
      if (!state.gpus.some((g) => g.uuid === uuid)) return false; // released
      // In this report without the card (the controller made each uuid one node's): released now.
      const j = inReport.get(holderId);
      return j === undefined || isOutOfOrder(reports[j], state, newest[j]);
    };
    // Holders: the nodes listing the cards, and the nodes with sessions (a session's cards stay
    // its own after its node stops listing them). A few cards (a node registered or given
    // cards): those nodes. Many (a cluster's first report): every node of the cluster, as
    // `$in` costs its length for each node read.
    const filter =
      claims.size <= MAX_CARDS_BY_UUID
        ? {
            clusterId,
            $or: [{ 'gpus.uuid': { $in: [...claims.keys()] } }, { runningSessions: { $gt: 0 } }],
          }
        : { clusterId };
    for await (const page of pagesOf<NodeDoc & Doc>(this.readModels, NODES, filter)) {
      for (const holder of page) {
        const uuids = new Set(holder.gpus.map((g) => g.uuid));
        for (const a of Object.values(holder.allocations)) for (const u of a.gpus) uuids.add(u);
        for (const uuid of uuids) {
          const i = claims.get(uuid);
          if (i === undefined || refs[i].nodeId === holder.nodeId) continue;
          if (!(await stillHeld(uuid, holder.nodeId))) continue;
          const hostname = reports[i].hostname;
          throw new DomainError(
            'gpu_uuid_conflict',
            `GPU ${uuid} reported for ${hostname} is held by node ${holder.hostname} of cluster ${clusterId}`,
            'conflict',
            { hostname, uuid, nodeId: holder.nodeId },
          );
        }
      }
    }
  }
}
