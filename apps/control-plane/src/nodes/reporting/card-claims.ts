import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, DomainError, uuidFrom } from '@fleet/kernel';
import { nodeAggregate } from '../node.aggregate';
import { nodeStreamId } from '../node.events';
import {
  CLAIM_PENDING_MS,
  ClaimGpuCards,
  gpuClaimsAggregate,
  gpuClaimsStreamId,
} from './gpu-claims';

export type CardClaims = {
  readonly clusterId: string;
  /** uuid → the claiming node (id, hostname, and its stream revision the report was decided on). */
  readonly claims: ReadonlyMap<string, { nodeId: string; hostname: string; since: number | null }>;
  /** Whether `holderId` still holds `uuid`, by its node's stream (inventory.service.ts). */
  readonly stillHeld: (uuid: string, holderId: string) => Promise<boolean>;
  readonly ctx: CommandContext;
};

const conflict = (uuid: string, hostname: string, holderId: string, clusterId: string) =>
  new DomainError(
    'gpu_uuid_conflict',
    `GPU ${uuid} reported for ${hostname} is claimed by node ${holderId} of cluster ${clusterId}`,
    'conflict',
    { hostname, uuid, nodeId: holderId },
  );

/**
 * Records a report's new cards on its cluster's claims stream (gpu-claims.ts) before its nodes'
 * events, refusing the report (409 gpu_uuid_conflict) when another node claimed one and still
 * holds it, or claimed it moments ago and its report may still be on its way (its node's stream
 * has not moved since, within CLAIM_PENDING_MS). The append is checked against the revision
 * read, so of two replicas claiming one uuid at once one wins and the other, deciding again on
 * the winner's claim, is refused. One append per report that takes new cards.
 */
export const claimCards = async (pipeline: CommandPipeline, input: CardClaims): Promise<void> => {
  const { clusterId, claims, stillHeld, ctx } = input;
  const stream = gpuClaimsStreamId(clusterId);
  const { state } = await pipeline.load(gpuClaimsAggregate, stream);
  const released: Array<{ uuid: string; holder: string }> = [];
  for (const [uuid, claimant] of claims) {
    const holder = state.holders.get(uuid);
    if (holder === undefined || holder.nodeId === claimant.nodeId) continue;
    const moved = (await pipeline.load(nodeAggregate, nodeStreamId(holder.nodeId))).revision;
    const pending =
      moved === holder.since && ctx.now.getTime() - Date.parse(holder.at) < CLAIM_PENDING_MS;
    if (pending || (await stillHeld(uuid, holder.nodeId)))
      throw conflict(uuid, claimant.hostname, holder.nodeId, clusterId);
    released.push({ uuid, holder: holder.nodeId });
  }
  const byNode = new Map<string, { nodeId: string; since: number | null; uuids: string[] }>();
  for (const [uuid, c] of claims) {
    const entry = byNode.get(c.nodeId) ?? { nodeId: c.nodeId, since: c.since, uuids: [] };
    entry.uuids.push(uuid);
    byNode.set(c.nodeId, entry);
  }
  const command: ClaimGpuCards = {
    type: 'ClaimGpuCards',
    data: {
      clusterId,
      claims: [...byNode.values()],
      released,
      at: ctx.now.toISOString(),
    },
  };
  try {
    await pipeline.handle(gpuClaimsAggregate, stream, command, {
      ...ctx,
      commandId: uuidFrom(ctx.commandId, 'gpu-claims'),
    });
  } catch (error) {
    // Lost a race: the decider names the uuid and its new holder; the answer names the host too.
    if (!(error instanceof DomainError) || error.code !== 'gpu_uuid_conflict') throw error;
    const { uuid, nodeId } = error.details as { uuid: string; nodeId: string };
    throw conflict(uuid, claims.get(uuid)?.hostname ?? '', nodeId, clusterId);
  }
};
