import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, EventCodec, Message } from '@fleet/kernel';

/**
 * Which node of a cluster last took each GPU uuid, on one stream per cluster
 * (`gpu-claims-<clusterId>`): a report that takes cards another node may hold appends its claim
 * here, with the revision its decision read, before its nodes' events. Two replicas taking one
 * uuid for two nodes at once race on that revision: the loser decides again on the winner's
 * claim and is refused `gpu_uuid_conflict`. The Nodes read model still finds holders from
 * before this stream existed; this stream is what decides between reports in flight.
 */
export const gpuClaimsStreamId = (clusterId: string): string => `gpu-claims-${clusterId}`;

/** A claim not yet followed by its node's events is pending this long, then taken for abandoned. */
export const CLAIM_PENDING_MS = 30_000;

/** One node's claim: its new cards, by uuid (grouped by node, so the event stays small). */
export type GpuClaim = {
  readonly nodeId: string;
  /** The claiming node's stream revision its report was decided on (null: a new node). */
  readonly since: number | null;
  readonly uuids: readonly string[];
};

export type GpuCardsClaimed = Message<
  'GpuCardsClaimed',
  { clusterId: string; claims: readonly GpuClaim[]; at: string }
>;
export type GpuClaimsEvent = GpuCardsClaimed;

/**
 * `released`: uuids whose recorded holder the claimant found no longer holding them (its node's
 * stream, read after the claim: deleted, or moved on without the card). Any other holder refuses.
 */
export type ClaimGpuCards = Message<
  'ClaimGpuCards',
  {
    clusterId: string;
    claims: readonly GpuClaim[];
    released: readonly { uuid: string; holder: string }[];
    at: string;
  }
>;

export type Holder = {
  readonly nodeId: string;
  readonly since: number | null;
  readonly at: string;
};
export type GpuClaimsState = { readonly holders: ReadonlyMap<string, Holder> };

const refuse = (uuid: string, nodeId: string, holder: string): DomainError =>
  new DomainError(
    'gpu_uuid_conflict',
    `GPU ${uuid} reported for node ${nodeId} is claimed by node ${holder} of the same cluster`,
    'conflict',
    { uuid, nodeId: holder },
  );

export const gpuClaimsDecider: Decider<ClaimGpuCards, GpuClaimsEvent, GpuClaimsState> = {
  initialState: () => ({ holders: new Map() }),
  evolve: (state, event) => {
    const holders = new Map(state.holders);
    for (const c of event.data.claims) {
      const holder = { nodeId: c.nodeId, since: c.since, at: event.data.at };
      for (const uuid of c.uuids) holders.set(uuid, holder);
    }
    return { holders };
  },
  decide: (command, state) => {
    const { clusterId, claims, released, at } = command.data;
    const taken: GpuClaim[] = [];
    for (const claim of claims) {
      const uuids = claim.uuids.filter((uuid) => {
        const holder = state.holders.get(uuid);
        if (holder?.nodeId === claim.nodeId) return false; // its own already
        const free =
          holder === undefined ||
          released.some((r) => r.uuid === uuid && r.holder === holder.nodeId);
        if (!free) throw refuse(uuid, claim.nodeId, holder.nodeId);
        return true;
      });
      if (uuids.length > 0) taken.push({ ...claim, uuids });
    }
    return taken.length === 0
      ? []
      : [{ type: 'GpuCardsClaimed', data: { clusterId, claims: taken, at } }];
  },
};

export const gpuClaimsCodec = new EventCodec<GpuClaimsEvent>({ GpuCardsClaimed: 1 });

export const gpuClaimsAggregate: Aggregate<ClaimGpuCards, GpuClaimsEvent, GpuClaimsState> = {
  name: 'gpu-claims',
  decider: gpuClaimsDecider,
  codec: gpuClaimsCodec,
};
