import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline, CommandResult, SubscriptionRunner } from '@fleet/cqrs';
import {
  CommandContext,
  DomainError,
  KeyLocks,
  Turns,
  UnavailableError,
  Made,
  isLater,
  isoTime,
  thenMade,
  uuidFrom,
} from '@fleet/kernel';
import { LOG_START, LogPosition, laterPosition } from '@fleet/eventstore/port';
import { Doc, ReadModelStore, pagesOf } from '@fleet/readmodels/port';
import { READ_MODELS } from '../../platform/runtime/tokens';
import { CLUSTERS, ClusterDoc } from '../../clusters';
import { LivenessSaga } from '../liveness/liveness.saga';
import { HEARTBEATS } from '../heartbeat/heartbeat.module';
import { Beat, Heartbeat, HeartbeatStore, laterObserved } from '../heartbeat/heartbeat.store';
import { NodeCommand, NodeReport, displayStatus, isOutOfOrder } from '../node.decider';
import { NodeRef, nodeAggregate } from '../node.aggregate';
import { NodeEvent, NodeState, nodeStreamId } from '../node.events';
import { NODES, NodeDoc } from '../nodes.projection';
import { NODES_PROJECTION } from '../nodes.commands';
import { claimCards } from './card-claims';
import { NodeRefs } from './node-refs';
import { Sightings } from './sightings';

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

/** One report on its way: its nodes and commands, what is decided so far, what it answers. */
type Pass = {
  readonly clusterId: string;
  readonly reports: readonly NodeReport[];
  readonly refs: readonly NodeRef[];
  readonly nodeIds: readonly string[];
  readonly streamIds: readonly string[];
  /** Redecided where another replica recorded a later observedAt (`claimOrder`). */
  readonly commands: NodeCommand[];
  readonly ctx: CommandContext;
  /** The nodes' heartbeats as read, and their newest observedAt (ISO). */
  readonly beats: ReadonlyArray<Heartbeat | null>;
  readonly newest: Array<string | null>;
  /** The no-op result per node where the fast path decided it, else undefined. */
  readonly noops: ReadonlyArray<CommandResult<NodeEvent, NodeState> | undefined>;
  readonly results: ReportedNode[];
  /** The report's sightings, one per node once settled. */
  readonly fresh: Beat[];
  /** The last position the report appended (LOG_START: nothing). */
  lastPosition: LogPosition;
};

/** Node `i` of the report decided: its answer, and its sighting. */
const settle = (pass: Pass, i: number, result: CommandResult<NodeEvent, NodeState>): void => {
  const report = pass.reports[i];
  const nodeId = pass.nodeIds[i];
  // Every report is a sighting at its receive time, an out-of-order one too (it changes
  // nothing, but the controller reached us now); the newest observedAt stays the newest. A
  // report without one was observed when received (API.md), so later ones dated before wait.
  const now = pass.ctx.now.getTime();
  const reported = report.observedAt ? Date.parse(report.observedAt) : now;
  const observedAt = laterObserved(pass.beats[i]?.observedAt ?? null, reported);
  pass.fresh.push({ nodeId, seenAt: now, observedAt });
  const state = result.state;
  pass.results[i] = {
    hostname: report.hostname,
    nodeId,
    status: displayStatus(state) ?? 'offline',
    desired: {
      unschedulable:
        state.status === 'online' || state.status === 'offline' ? state.cordon.desired : false,
    },
  };
};

/**
 * ReportInventory: each node of a report is upserted by (cluster, hostname). Changes append
 * events; a report that changes nothing only refreshes the heartbeat store: no event, and
 * nothing written to the job queue.
 */
@Injectable()
export class InventoryService {
  private readonly sightings: Sightings;
  private readonly refs = new NodeRefs();

  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(HEARTBEATS) heartbeats: HeartbeatStore,
    @Inject(LivenessSaga) private readonly liveness: LivenessSaga,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
  ) {
    this.sightings = new Sightings(heartbeats);
  }

  private readonly logger = new Logger('inventory');

  /** Per cluster, reports that may claim GPU cards: one at a time. */
  private readonly claiming = new Turns();

  /** Clusters found deleted (a status they never leave). */
  private readonly deletedClusters = new Set<string>();

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
    await this.refuseDeleted(clusterId);
    const refs = reports.map((r) => this.refs.of(clusterId, r.hostname));
    const nodeIds = refs.map((ref) => ref.nodeId);
    // Taken at once when no report of these nodes is in flight (the common case): no promise.
    if (!this.reporting.tryTake(nodeIds)) await this.reporting.take(nodeIds);
    let pass: Pass;
    try {
      // From stores in this process (the embedded ones) and the cached states, a report that
      // changes nothing is decided without awaiting a promise: each costs a turn of the loop.
      const decided = this.decide(clusterId, reports, refs, nodeIds, ctx);
      pass = isLater(decided) ? await decided : decided;
      if (allDecided(pass.noops)) {
        // Nothing to append (the common report): settled here, no pipeline and no card check.
        for (let i = 0; i < reports.length; i++) settle(pass, i, pass.noops[i]);
      } else {
        await this.apply(pass);
      }
      const recorded = this.record(pass);
      if (isLater(recorded)) await recorded;
    } finally {
      this.reporting.release(nodeIds);
    }
    // A stall of these nodes ends when they report: the cluster's liveness stream is read
    // unless it was found reporting just now (one read a second, not one a report).
    if (this.liveness.mayBeStalled(clusterId)) {
      await this.liveness.reportsArrived(clusterId, nodeIds, ctx);
    }
    return pass.results;
  }

  /**
   * 409 cluster_deleted: a deleted cluster's operator must not register its nodes again. One
   * look at the cluster per report, not per node; `deleted` is for good, so it is remembered.
   */
  private async refuseDeleted(clusterId: string): Promise<void> {
    if (!this.deletedClusters.has(clusterId)) {
      const cluster = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
      if ((cluster?.status as string | undefined) !== 'deleted') return;
      this.deletedClusters.add(clusterId);
    }
    throw new DomainError(
      'cluster_deleted',
      `cluster ${clusterId} is deleted: its reports are refused`,
      'conflict',
      { clusterId },
    );
  }

  /**
   * The report's commands, one `ReportNode` per node, and the nodes it changes nothing on: the
   * common report, decided in one pass on the cached states without a queued command per node.
   */
  private decide(
    clusterId: string,
    reports: readonly NodeReport[],
    refs: readonly NodeRef[],
    nodeIds: readonly string[],
    ctx: CommandContext,
  ): Made<Pass> {
    const receivedAt = isoTime(ctx.now.getTime());
    const streamIds = refs.map((ref) => ref.streamId);
    return thenMade(this.sightings.newest(nodeIds, reports), (beats) => {
      const newest = beats.map((b) => toIso(b?.observedAt ?? null));
      const commands: NodeCommand[] = reports.map((report, i) => ({
        type: 'ReportNode',
        data: { nodeId: nodeIds[i], report, receivedAt, newestObservedAt: newest[i] },
      }));
      return thenMade(
        this.pipeline.decideNoops(nodeAggregate, streamIds, commands),
        (noops): Pass => ({
          clusterId,
          reports,
          refs,
          nodeIds,
          streamIds,
          commands,
          ctx,
          beats,
          newest,
          noops,
          results: new Array<ReportedNode>(reports.length),
          fresh: [],
          lastPosition: LOG_START,
        }),
      );
    });
  }

  /**
   * A report that changes something: recorded only while its sightings can be (with Redis out
   * of reach it is refused, 503, with nothing appended); then its changing nodes take the
   * pipeline. The card check reads the Nodes read model, so the next claiming report of the
   * cluster waits until this one's cards show there: two concurrent reports cannot both take
   * one uuid for two nodes (in this process; across replicas the claims stream decides).
   */
  private async apply(pass: Pass): Promise<void> {
    await this.claimOrder(pass);
    if (!mayClaimCards(pass.reports, pass.noops)) return this.handleChanges(pass);
    await this.claiming.run(pass.clusterId, async () => {
      await this.handleChanges(pass);
      await this.runner.settle(pass.lastPosition, [NODES_PROJECTION]);
    });
  }

  /**
   * Across replicas, the changing nodes reported with an observedAt take their place in their
   * node's order in the heartbeat store (heartbeat-order.ts) before anything is appended: a node
   * another replica saw a later report of is decided again against that newest observedAt (so
   * an older report changes nothing), whatever this replica read before. Also what refuses the
   * report (503, nothing appended) while the store is out of reach.
   */
  private async claimOrder(pass: Pass): Promise<void> {
    const claimed: number[] = [];
    const seenAt = pass.ctx.now.getTime();
    const beats: Beat[] = [];
    for (let i = 0; i < pass.reports.length; i++) {
      const observedAt = pass.reports[i].observedAt;
      if (pass.noops[i] !== undefined || observedAt === null) continue;
      claimed.push(i);
      beats.push({ nodeId: pass.nodeIds[i], seenAt, observedAt: Date.parse(observedAt) });
    }
    const made = this.sightings.claimOrder(beats);
    const later = isLater(made) ? await made : made;
    if (later === undefined) return;
    claimed.forEach((i, k) => {
      const newest = later[k];
      if (newest === null) return;
      pass.newest[i] = toIso(newest);
      const command = pass.commands[i];
      if (command.type === 'ReportNode')
        pass.commands[i] = {
          ...command,
          data: { ...command.data, newestObservedAt: pass.newest[i] },
        };
    });
  }

  private async handleChanges(pass: Pass): Promise<void> {
    const { reports, newest, noops, ctx } = pass;
    await this.refuseCardsHeldElsewhere(pass, newest, noops);
    // No promise per no-op node: only the nodes that take the pipeline are awaited.
    const handled: Array<Promise<void>> = [];
    for (let i = 0; i < reports.length; i++) {
      const noop = noops[i];
      if (noop !== undefined) {
        settle(pass, i, noop);
        continue;
      }
      // One command per node, its id derived from the request's: a replayed report appends nothing.
      const nodeCtx = { ...ctx, commandId: uuidFrom(ctx.commandId, pass.nodeIds[i]) };
      handled.push(
        this.pipeline
          .handle(nodeAggregate, pass.streamIds[i], pass.commands[i], nodeCtx)
          .then((result) => {
            pass.lastPosition = laterPosition(pass.lastPosition, result.position);
            settle(pass, i, result);
          }),
      );
    }
    await Promise.all(handled);
  }

  /**
   * The report's sightings. What a report waits for: its changes appended, and its nodes'
   * newest heartbeats read where its order needs them; not always their write (sightings.ts).
   */
  private record(pass: Pass): Made<void> {
    // Redis went away after the report's changes were appended: they are done, and a 503
    // ("nothing was done") would be false. Only the sightings are lost; the nodes' recorded
    // changes are what liveness counts from until they report again.
    const lost = (error: unknown): void => {
      if (!(error instanceof UnavailableError) || pass.lastPosition === LOG_START) throw error;
      this.logger.warn(
        `report of ${pass.reports.length} node(s) in ${pass.clusterId} recorded, sightings not: ${error.message}`,
      );
    };
    try {
      const recorded = this.sightings.record(pass.fresh);
      return isLater(recorded) ? recorded.catch(lost) : recorded;
    } catch (error) {
      return lost(error);
    }
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
   * cards (`report`); across replicas, the cluster's claims stream decides (card-claims.ts).
   */
  private async refuseCardsHeldElsewhere(
    { clusterId, reports, refs, ctx }: Pick<Pass, 'clusterId' | 'reports' | 'refs' | 'ctx'>,
    newest: ReadonlyArray<string | null>,
    noops: ReadonlyArray<CommandResult<NodeEvent, NodeState> | undefined>,
  ): Promise<void> {
    const receivedAt = isoTime(ctx.now.getTime());
    const changing: number[] = [];
    for (let i = 0; i < reports.length; i++)
      if (noops[i] === undefined && reports[i].gpus.length > 0) changing.push(i);
    if (changing.length === 0) return;
    const loaded = await Promise.all(
      changing.map((i) => this.pipeline.load(nodeAggregate, refs[i].streamId)),
    );
    const states = loaded.map((l) => l.state);
    /** uuid → the report's node taking it (the controller made each uuid one node's). */
    const claims = new Map<string, number>();
    changing.forEach((i, c) => {
      const state = states[c];
      const known = state.status === 'online' || state.status === 'offline';
      if (known && isOutOfOrder(reports[i], receivedAt, state, newest[i])) return; // changes nothing
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
      return j === undefined || isOutOfOrder(reports[j], receivedAt, state, newest[j]);
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
    // Across replicas the read above can miss a report in flight: the claims stream decides.
    const revisionOf = new Map(changing.map((i, c) => [i, loaded[c].revision]));
    const byUuid = new Map(
      [...claims].map(([uuid, i]) => [
        uuid,
        { nodeId: refs[i].nodeId, hostname: reports[i].hostname, since: revisionOf.get(i) ?? null },
      ]),
    );
    await claimCards(this.pipeline, { clusterId, claims: byUuid, stillHeld, ctx });
  }
}
