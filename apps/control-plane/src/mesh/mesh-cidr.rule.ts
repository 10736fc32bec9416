import { DomainError } from '@fleet/kernel';
import { Cidr, checkCidr, cidrsOverlap } from '../catalog/cidr';

/** A cluster's blocks as the rule reads them: null when unknown (adopted from reports). */
export type ClusterBlocks = {
  readonly clusterId: string;
  readonly podCidr: string | null;
  readonly serviceCidr: string | null;
};

/** A live link (pending, approved, connecting or connected) between two clusters. */
export type MeshLink = { readonly fromClusterId: string; readonly toClusterId: string };

type Block = { clusterId: string; field: 'podCidr' | 'serviceCidr'; cidr: string; block: Cidr };

/** 409 cidr_overlap naming both clusters and both blocks. */
const overlap = (a: Block, b: Block): DomainError =>
  new DomainError(
    'cidr_overlap',
    `${a.field} ${a.cidr} of cluster ${a.clusterId} overlaps ${b.field} ${b.cidr} of cluster ${b.clusterId}`,
    'conflict',
    {
      clusters: [a.clusterId, b.clusterId],
      blocks: [
        { clusterId: a.clusterId, field: a.field, cidr: a.cidr },
        { clusterId: b.clusterId, field: b.field, cidr: b.cidr },
      ],
    },
  );

/** The clusters the rule covers: the pair and every cluster already meshed with either. */
export const meshGroup = (pair: MeshLink, links: readonly MeshLink[]): string[] => {
  const ends = [pair.fromClusterId, pair.toClusterId];
  const group = new Set(ends);
  for (const link of links) {
    if (ends.includes(link.fromClusterId)) group.add(link.toClusterId);
    if (ends.includes(link.toClusterId)) group.add(link.fromClusterId);
  }
  return [...group];
};

const blocksOf = (cluster: ClusterBlocks): Block[] | null => {
  const blocks: Block[] = [];
  for (const field of ['podCidr', 'serviceCidr'] as const) {
    const text = cluster[field];
    const parsed = text === null ? null : checkCidr(text);
    if (parsed === null || !('cidr' in parsed)) return null;
    blocks.push({ clusterId: cluster.clusterId, field, cidr: text!, block: parsed.cidr });
  }
  return blocks;
};

/**
 * The refusal of a mesh between `pair`, or null: 409 `cidrs_unknown` when a cluster of the pair
 * has no known blocks, 409 `cidr_overlap` (naming both clusters and both blocks) when any pod or
 * service block of the group overlaps a block of another cluster of the group. `clusters` holds
 * every cluster of the group (a missing one counts as unknown).
 */
export const meshCidrRefusal = (
  pair: MeshLink,
  links: readonly MeshLink[],
  clusters: ReadonlyMap<string, ClusterBlocks>,
): DomainError | null => {
  const group = meshGroup(pair, links);
  const blocks: Block[] = [];
  for (const clusterId of group) {
    const cluster = clusters.get(clusterId);
    const known = cluster ? blocksOf(cluster) : null;
    if (known === null) {
      return new DomainError(
        'cidrs_unknown',
        `cluster ${clusterId} has no known pod and service CIDRs: an admin sets them with PUT /v1/clusters/${clusterId}/network`,
        'conflict',
        { clusterId },
      );
    }
    blocks.push(...known);
  }
  // Stryker disable next-line EqualityOperator: at i = length the inner loop has no pair to test
  for (let i = 0; i < blocks.length; i++) {
    for (let j = i + 1; j < blocks.length; j++) {
      const [a, b] = [blocks[i], blocks[j]];
      if (a.clusterId === b.clusterId || !cidrsOverlap(a.block, b.block)) continue;
      return overlap(a, b);
    }
  }
  return null;
};

/**
 * The refusal of new blocks for `cluster`, or null: 409 `cidr_overlap` when a new block
 * overlaps a block of a cluster meshed with it (`links` live, `clusters` holding them).
 */
export const networkRefusal = (
  cluster: ClusterBlocks,
  links: readonly MeshLink[],
  clusters: ReadonlyMap<string, ClusterBlocks>,
): DomainError | null => {
  const mine = blocksOf(cluster);
  if (mine === null) return null; // malformed blocks are the caller's 400
  for (const link of links) {
    const other =
      link.fromClusterId === cluster.clusterId
        ? link.toClusterId
        : link.toClusterId === cluster.clusterId
          ? link.fromClusterId
          : null;
    const theirs = other === null ? null : blocksOf(clusters.get(other) ?? unknown(other));
    for (const a of mine) {
      for (const b of theirs ?? []) {
        if (cidrsOverlap(a.block, b.block)) return overlap(a, b);
      }
    }
  }
  return null;
};

const unknown = (clusterId: string): ClusterBlocks => ({
  clusterId,
  podCidr: null,
  serviceCidr: null,
});
