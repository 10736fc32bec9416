import { EventCodec, Message } from '@fleet/kernel';
import { StoredEvent } from '@fleet/eventstore/port';
import { ClusterLivenessEvent, clusterLivenessCodec } from '../clusters';
import { NodeEvent, nodeCodec } from '../nodes';
import { PoolEvent, poolCodec } from '../pools';

export const NOTIFICATION_TYPES = [
  'node_status_changed',
  'cluster_reports_stalled',
  'cordon_sync_overdue',
  'pool_emptied',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** An admin notification exactly as the API shows it (and the webhook receives it). */
export type Notification = {
  /** The event's id: one transition is one notification, however often it is replayed. */
  readonly id: string;
  readonly type: NotificationType;
  readonly clusterId: string;
  readonly nodeId: string | null;
  readonly hostname: string | null;
  readonly from: string | null;
  readonly to: string | null;
  readonly reason: string | null;
  readonly at: string;
};

export const NOTIFICATION_FIELDS = [
  'id',
  'type',
  'clusterId',
  'nodeId',
  'hostname',
  'from',
  'to',
  'reason',
  'at',
] as const satisfies ReadonlyArray<keyof Notification>;

type Body = Omit<Notification, 'id'>;

type Rule = (storedType: string, data: unknown) => Body | null;

/**
 * One rule per event type: decodes with the feature's codec (so upcast old versions map the
 * same way) and maps the current shape. Keys are every stored name the codec reads for it.
 */
const on = <E extends Message, T extends E['type']>(
  codec: EventCodec<E>,
  type: T,
  map: (data: Extract<E, { type: T }>['data']) => Body,
): Array<[string, Rule]> => {
  const rule: Rule = (storedType, data) => {
    const event = codec.decode(storedType, data);
    return event && event.type === type ? map(event.data as Extract<E, { type: T }>['data']) : null;
  };
  return codec.storedTypesOf(type).map((stored) => [stored, rule]);
};

/** Keeps `at` in one ISO form, so string order is time order for `since` and sorting. */
const iso = (at: string): string => {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? at : new Date(ms).toISOString();
};

/** Which events notify, keyed by stored type. */
const RULES: ReadonlyMap<string, Rule> = new Map([
  ...on<NodeEvent, 'NodeWentOffline'>(nodeCodec, 'NodeWentOffline', (d) => ({
    type: 'node_status_changed',
    clusterId: d.clusterId,
    nodeId: d.nodeId,
    hostname: d.hostname,
    from: d.from,
    to: 'offline',
    reason: d.reason,
    at: iso(d.at),
  })),
  ...on<NodeEvent, 'NodeCameOnline'>(nodeCodec, 'NodeCameOnline', (d) => ({
    type: 'node_status_changed',
    clusterId: d.clusterId,
    nodeId: d.nodeId,
    hostname: d.hostname,
    from: 'offline',
    to: d.to,
    reason: null,
    at: iso(d.at),
  })),
  ...on<NodeEvent, 'NodeCordonSyncWentOverdue'>(nodeCodec, 'NodeCordonSyncWentOverdue', (d) => ({
    type: 'cordon_sync_overdue',
    clusterId: d.clusterId,
    nodeId: d.nodeId,
    hostname: d.hostname,
    from: d.observed === null ? null : `unschedulable=${d.observed}`,
    to: `unschedulable=${d.desired}`,
    reason: `${d.desired ? 'cordon' : 'uncordon'} desired=${d.desired} not observed within ${Math.floor(
      (Date.parse(d.at) - Date.parse(d.since)) / 1000,
    )} s`,
    at: iso(d.at),
  })),
  ...on<ClusterLivenessEvent, 'ClusterReportsStalled'>(
    clusterLivenessCodec,
    'ClusterReportsStalled',
    (d) => ({
      type: 'cluster_reports_stalled',
      clusterId: d.clusterId,
      nodeId: null,
      hostname: null,
      from: null,
      to: null,
      reason: `${d.staleNodes.length} of ${d.onlineNodes} online nodes stopped reporting`,
      at: iso(d.at),
    }),
  ),
  ...on<PoolEvent, 'NodePoolEmptied'>(poolCodec, 'NodePoolEmptied', (d) => ({
    type: 'pool_emptied',
    clusterId: d.clusterId,
    nodeId: d.nodeId,
    hostname: d.hostname,
    from: null,
    to: null,
    reason: `dedicated pool ${d.name} (${d.poolId}) has no GPU card left`,
    at: iso(d.at),
  })),
]);

/** The stored event types that raise a notification. */
export const NOTIFYING_EVENT_TYPES: readonly string[] = [...RULES.keys()];

/** The notification an event raises, or null for every event that raises none. */
export const toNotification = (event: StoredEvent): Notification | null => {
  const body = RULES.get(event.type)?.(event.type, event.data);
  return body ? { id: event.eventId, ...body } : null;
};
