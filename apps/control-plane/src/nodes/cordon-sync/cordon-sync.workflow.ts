import { Message, Workflow, assertNever, uuidFrom } from '@fleet/kernel';
import { NodeState } from '../node.events';

/**
 * The cordon-sync deadline as a workflow (pure): each cordon or uncordon arms one deadline per
 * node at the change + CORDON_SYNC_SEC (a newer change replaces it); when it passes and
 * Kubernetes still shows the other state, the node is flagged overdue, once per change.
 */

/** A node's pending deadline, as the job queue keeps it (its fields are stored: names stay). */
export type CordonSyncDeadline = {
  nodeId: string;
  desired: boolean;
  /** When the desired state was set (the cordon or uncordon). */
  since: string;
  /** The cordon's correlation id, so an auditor follows it to the overdue flag. */
  correlationId: string;
  causationId: string;
};

/** What the workflow reads of the node: its desired cordon state against what Kubernetes said. */
export type CordonSyncState =
  | { readonly status: 'untracked' }
  | {
      readonly status: 'tracked';
      readonly desired: boolean;
      /** When the desired state last changed; null until the first change. */
      readonly since: string | null;
      /** Whether this change was already flagged (once per change). */
      readonly overdue: boolean;
      /** Kubernetes' unschedulable flag as last reported; null until reported. */
      readonly observed: boolean | null;
    };

export const cordonSyncStateOf = (node: NodeState): CordonSyncState =>
  node.status === 'online' || node.status === 'offline'
    ? {
        status: 'tracked',
        desired: node.cordon.desired,
        since: node.cordon.since,
        overdue: node.cordon.overdue,
        observed: node.observedUnschedulable,
      }
    : { status: 'untracked' };

/** The event that set a desired state, as the saga read it from the log. */
type Change = { nodeId: string; at: string; eventId: string; correlationId: string };

export type CordonSyncInput =
  | Message<'NodeCordoned', Change>
  | Message<'NodeUncordoned', Change>
  | Message<'NodeDeleted', { nodeId: string }>
  /**
   * A deadline passed. `heartbeatsRestoredAt`: since when reports have been recordable without
   * a break (the heartbeat store's return after an outage, epoch ms).
   */
  | Message<
      'CordonSyncDeadlinePassed',
      { deadline: CordonSyncDeadline; heartbeatsRestoredAt: number; at: string }
    >
  /** The repair found an unsynced node without a deadline (a restart, or a lost Redis). */
  | Message<'CordonSyncDeadlineLost', { nodeId: string }>;

export type CordonSyncOutput =
  | Message<'ScheduleCordonSyncDeadline', { deadline: CordonSyncDeadline; runAt: number }>
  | Message<'CancelCordonSyncDeadline', { nodeId: string }>
  | Message<
      'FlagCordonSyncOverdue',
      {
        nodeId: string;
        desired: boolean;
        at: string;
        /** One per change: a retried or duplicated deadline appends nothing new. */
        commandId: string;
        correlationId: string;
        causationId: string;
      }
    >;

/**
 * Whether the deadline still waits for Kubernetes: the change it checks is the node's latest,
 * not flagged yet, and not shown applied. Nothing else about the deadline needs reading then.
 */
export const awaitsSync = (deadline: CordonSyncDeadline, state: CordonSyncState): boolean =>
  state.status === 'tracked' &&
  // A newer change armed its own deadline; this one is stale.
  state.desired === deadline.desired &&
  state.since === deadline.since &&
  !state.overdue &&
  state.observed !== state.desired;

export type CordonSyncConfig = { readonly syncSec: number };

export const cordonSyncWorkflow = ({
  syncSec,
}: CordonSyncConfig): Workflow<CordonSyncInput, CordonSyncOutput, CordonSyncState> => {
  const syncMs = syncSec * 1000;
  const schedule = (deadline: CordonSyncDeadline, runAt: number): CordonSyncOutput[] => [
    { type: 'ScheduleCordonSyncDeadline', data: { deadline, runAt } },
  ];
  const arm = (deadline: CordonSyncDeadline) =>
    schedule(deadline, Date.parse(deadline.since) + syncMs);

  const decide = (input: CordonSyncInput, state: CordonSyncState): CordonSyncOutput[] => {
    switch (input.type) {
      case 'NodeCordoned':
      case 'NodeUncordoned': {
        const { nodeId, at, eventId, correlationId } = input.data;
        const desired = input.type === 'NodeCordoned';
        return arm({ nodeId, desired, since: at, correlationId, causationId: eventId });
      }
      case 'NodeDeleted':
        return [{ type: 'CancelCordonSyncDeadline', data: { nodeId: input.data.nodeId } }];
      case 'CordonSyncDeadlinePassed': {
        const { deadline, heartbeatsRestoredAt: restored, at } = input.data;
        if (!awaitsSync(deadline, state)) return [];
        // Reports could not be recorded while the heartbeat store was out of reach, so the
        // operator could not show the change applied: its time runs again from the store's
        // return, as a node's silence does.
        if (restored > Date.parse(deadline.since) && Date.parse(at) < restored + syncMs)
          return schedule(deadline, restored + syncMs);
        const { nodeId, desired, since, correlationId, causationId } = deadline;
        return [
          {
            type: 'FlagCordonSyncOverdue',
            data: {
              nodeId,
              desired,
              at,
              commandId: uuidFrom('cordon-sync-overdue', nodeId, since, String(desired)),
              correlationId,
              causationId,
            },
          },
        ];
      }
      case 'CordonSyncDeadlineLost': {
        if (state.status !== 'tracked') return [];
        const { desired, since, overdue, observed } = state;
        if (since === null || overdue || observed === desired) return [];
        const { nodeId } = input.data;
        // No event to join: the re-armed deadline gets ids of its own, the same on every repair.
        const id = uuidFrom('cordon-sync-reconcile', nodeId, since);
        return arm({ nodeId, desired, since, correlationId: id, causationId: id });
      }
      default:
        return assertNever(input, 'cordon-sync input');
    }
  };

  return {
    initialState: () => ({ status: 'untracked' }),
    evolve: (state, input) => {
      switch (input.type) {
        case 'NodeCordoned':
        case 'NodeUncordoned':
          return {
            status: 'tracked',
            desired: input.type === 'NodeCordoned',
            since: input.data.at,
            overdue: false,
            observed: state.status === 'tracked' ? state.observed : null,
          };
        case 'NodeDeleted':
          return { status: 'untracked' };
        case 'CordonSyncDeadlinePassed':
          // The flag sent marks the change: a second passing of its deadline flags nothing.
          return state.status === 'tracked' &&
            decide(input, state).some((o) => o.type === 'FlagCordonSyncOverdue')
            ? { ...state, overdue: true }
            : state;
        default:
          return state;
      }
    },
    decide,
  };
};
