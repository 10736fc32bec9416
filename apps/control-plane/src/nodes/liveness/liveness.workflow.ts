import { Message, Workflow, assertNever, uuidFrom } from '@fleet/kernel';
import { NodeEvent, isBeingRemoved } from '../node.events';

/**
 * A node's liveness as a workflow (pure): one offline timer per online node at its last
 * sighting + NODE_STALE_SEC; reports never touch it. When it fires, the node is re-armed if it
 * reported since, held if the mass-failure guard holds its cluster (cluster-guard.ts), else
 * timed out. Times are epoch ms, as the heartbeat store and the job queue keep them.
 */

/** The event that made a timer fire at once: the offline it leads to joins its request. */
export type TimeoutCause = { readonly eventId: string; readonly correlationId: string };

/** What a firing timer reads of its node (in bulk with the others firing with it). */
export type SilenceFacts = {
  readonly nodeId: string;
  /** The node, while online (null: offline, deleted or unknown, nothing left to time). */
  readonly node: {
    readonly clusterId: string;
    /** Receive time of its last report that changed something. */
    readonly changedAt: string;
    readonly removal: { readonly until: string } | null;
  } | null;
  /** Its last heartbeat; null when the heartbeat store has none (restarted or flushed). */
  readonly heartbeatSeenAt: number | null;
  /** The end of its cluster's last stall (every clock restarts then), if any. */
  readonly clusterResumedAt: string | null;
  /** Since when reports have been recordable without a break (the heartbeat store's return). */
  readonly heartbeatsRestoredAt: number;
  readonly at: number;
};

type NodeLivenessEvent = Extract<
  NodeEvent,
  { type: 'NodeRegistered' | 'NodeCameOnline' | 'NodeWentOffline' | 'NodeDeleted' }
>;

export type LivenessInput =
  | NodeLivenessEvent
  /** An admin confirmed the outage of the node's cluster: it is checked at once. */
  | Message<'NodeOutageConfirmed', { nodeId: string; cause: TimeoutCause; at: number }>
  /** Its timer fired. `held`: the guard holds its cluster's silent nodes (read only when due). */
  | Message<
      'OfflineTimeoutFired',
      SilenceFacts & { readonly held: boolean; readonly cause: TimeoutCause | null }
    >
  /** The guard read its heartbeat while weighing its cluster. */
  | Message<'HeartbeatRead', { nodeId: string; seenAt: number | null; at: number }>
  /** The repair found no timer for it; `online`: what its aggregate says (the read model lags). */
  | Message<'OfflineTimeoutLost', { nodeId: string; online: boolean; at: number }>;

export type LivenessOutput =
  | Message<'ScheduleOfflineTimeout', { nodeId: string; runAt: number }>
  /** Run the node's timer now, joined to `cause`; a run already due does it instead. */
  | Message<'CheckSilenceNow', { nodeId: string; runAt: number; cause: TimeoutCause }>
  | Message<'CancelOfflineTimeout', { nodeId: string }>
  | Message<
      'TimeOutNodeHeartbeat',
      {
        nodeId: string;
        /** One per last sighting: a retried or duplicated timeout appends nothing new. */
        commandId: string;
        lastSeenAt: string;
        staleSec: number;
        at: string;
        cause: TimeoutCause | null;
      }
    >;

export type LivenessState = {
  /**
   * When this process first found the node's heartbeat missing (the store restarted or was
   * flushed): its grace starts then. Null while it has one.
   */
  readonly heartbeatLostAt: number | null;
};

const INITIAL: LivenessState = { heartbeatLostAt: null };

/**
 * When the node was last seen. `at`: its heartbeat, or, when the store lost it, the moment
 * the loss was first noticed (never before the node's last change): a full window from there.
 * `proof`: the last sighting on record, where an offline ends its sessions' bills; without a
 * heartbeat only the node's last change is, so no unproven time is billed.
 */
export const lastSeen = (
  state: LivenessState,
  heartbeatSeenAt: number | null,
  changedAt: string,
  now: number,
): { at: number; proof: number } => {
  if (heartbeatSeenAt !== null) return { at: heartbeatSeenAt, proof: heartbeatSeenAt };
  const changed = Date.parse(changedAt);
  return { at: Math.max(state.heartbeatLostAt ?? now, changed), proof: changed };
};

/**
 * The time a node's silence is counted from: its last sighting, or the end of its cluster's
 * stall if later (every clock restarts then, so no stampede of offlines follows), or the
 * heartbeat store's return after an outage (reports could not be recorded meanwhile). Timing
 * only: the offline records the real last sighting.
 */
export const silentSince = (
  seenAt: number,
  clusterResumedAt: string | null,
  heartbeatsRestoredAt: number,
): number =>
  Math.max(seenAt, clusterResumedAt ? Date.parse(clusterResumedAt) : 0, heartbeatsRestoredAt);

export type Silence =
  | { readonly kind: 'none' }
  | { readonly kind: 'reported'; readonly rearmAt: number }
  /** `removing`: a pool operation is removing it; its silence is expected, never held. */
  | { readonly kind: 'due'; readonly lastSeenAt: number; readonly removing: boolean };

/** How long a node whose timer fired has been silent; the guard is asked only when `due`. */
export const weighNodeSilence = (
  facts: SilenceFacts,
  state: LivenessState,
  staleMs: number,
): Silence => {
  const { node, at } = facts;
  if (!node) return { kind: 'none' };
  const seen = lastSeen(state, facts.heartbeatSeenAt, node.changedAt, at);
  const since = silentSince(seen.at, facts.clusterResumedAt, facts.heartbeatsRestoredAt);
  if (since + staleMs > at) return { kind: 'reported', rearmAt: since + staleMs };
  return { kind: 'due', lastSeenAt: seen.proof, removing: isBeingRemoved(node.removal, at) };
};

const heartbeatRead = (state: LivenessState, seenAt: number | null, at: number): LivenessState =>
  seenAt !== null ? INITIAL : state.heartbeatLostAt === null ? { heartbeatLostAt: at } : state;

export type LivenessConfig = { readonly staleSec: number };

/** What the node's runs keep: a lost heartbeat's grace starts the first time it is missed. */
export const evolveLiveness = (state: LivenessState, input: LivenessInput): LivenessState => {
  switch (input.type) {
    case 'NodeWentOffline':
    case 'NodeDeleted':
      return INITIAL;
    case 'OfflineTimeoutFired':
      return input.data.node
        ? heartbeatRead(state, input.data.heartbeatSeenAt, input.data.at)
        : state;
    case 'HeartbeatRead':
      return heartbeatRead(state, input.data.seenAt, input.data.at);
    default:
      return state;
  }
};

const schedule = (nodeId: string, runAt: number): LivenessOutput[] => [
  { type: 'ScheduleOfflineTimeout', data: { nodeId, runAt } },
];

const timeOut = (
  { staleSec }: LivenessConfig,
  nodeId: string,
  lastSeenAt: number,
  at: number,
  cause: TimeoutCause | null,
): LivenessOutput[] => [
  {
    type: 'TimeOutNodeHeartbeat',
    data: {
      nodeId,
      commandId: uuidFrom('heartbeat-timeout', nodeId, String(lastSeenAt)),
      lastSeenAt: new Date(lastSeenAt).toISOString(),
      staleSec,
      at: new Date(at).toISOString(),
      cause,
    },
  },
];

export const decideLiveness = (
  config: LivenessConfig,
  input: LivenessInput,
  state: LivenessState,
): LivenessOutput[] => {
  const staleMs = config.staleSec * 1000;
  switch (input.type) {
    case 'NodeRegistered': {
      const { nodeId, kubeletReady, registeredAt } = input.data;
      return kubeletReady ? schedule(nodeId, Date.parse(registeredAt) + staleMs) : [];
    }
    case 'NodeCameOnline':
      return schedule(input.data.nodeId, Date.parse(input.data.at) + staleMs);
    case 'NodeWentOffline':
      // Timed out: the timer that did it is running and ends by itself (a running job
      // cannot be removed). Any other leftover finds the node offline and does nothing.
      if (input.data.reason === 'heartbeat_timeout') return [];
      return [{ type: 'CancelOfflineTimeout', data: { nodeId: input.data.nodeId } }];
    case 'NodeDeleted':
      return [{ type: 'CancelOfflineTimeout', data: { nodeId: input.data.nodeId } }];
    case 'NodeOutageConfirmed': {
      const { nodeId, cause, at } = input.data;
      return [{ type: 'CheckSilenceNow', data: { nodeId, runAt: at, cause } }];
    }
    case 'OfflineTimeoutFired': {
      const { nodeId, held, cause, at } = input.data;
      const silence = weighNodeSilence(input.data, state, staleMs);
      if (silence.kind === 'none') return [];
      if (silence.kind === 'reported') return schedule(nodeId, silence.rearmAt);
      // Held, not offline: checked again after another window.
      if (held && !silence.removing) return schedule(nodeId, at + staleMs);
      return timeOut(config, nodeId, silence.lastSeenAt, at, cause);
    }
    case 'HeartbeatRead':
      return [];
    case 'OfflineTimeoutLost': {
      const { nodeId, online, at } = input.data;
      return online ? schedule(nodeId, at) : [];
    }
    default:
      return assertNever(input, 'liveness input');
  }
};

export const livenessWorkflow = (
  config: LivenessConfig,
): Workflow<LivenessInput, LivenessOutput, LivenessState> => ({
  initialState: () => INITIAL,
  evolve: evolveLiveness,
  decide: (input, state) => decideLiveness(config, input, state),
});
