import {
  ClusterBlocks,
  MeshLink,
  meshCidrRefusal,
  meshGroup,
  networkRefusal,
} from './mesh-cidr.rule';

const cluster = (clusterId: string, podCidr: string | null, serviceCidr: string | null) =>
  [clusterId, { clusterId, podCidr, serviceCidr }] as const;
const fleet = (...clusters: Array<readonly [string, ClusterBlocks]>) => new Map(clusters);
const pair = (fromClusterId: string, toClusterId: string): MeshLink => ({
  fromClusterId,
  toClusterId,
});

describe('the Cluster Mesh CIDR rule', () => {
  const a = cluster('a', '10.1.0.0/16', '10.101.0.0/16');
  const b = cluster('b', '10.2.0.0/16', '10.102.0.0/16');
  const c = cluster('c', '10.3.0.0/16', '10.103.0.0/16');

  it('allows two clusters whose blocks are apart', () => {
    expect(meshCidrRefusal(pair('a', 'b'), [], fleet(a, b))).toBeNull();
  });

  it('refuses a pod block of one inside the other’s service block, naming both', () => {
    const wide = cluster('b', '10.2.0.0/16', '10.0.0.0/8');
    const refusal = meshCidrRefusal(pair('a', 'b'), [], fleet(a, wide));
    expect(refusal?.code).toBe('cidr_overlap');
    expect(refusal?.details).toEqual({
      clusters: ['a', 'b'],
      blocks: [
        { clusterId: 'a', field: 'podCidr', cidr: '10.1.0.0/16' },
        { clusterId: 'b', field: 'serviceCidr', cidr: '10.0.0.0/8' },
      ],
    });
  });

  it('finds overlaps at the edge of a block and not one address past it', () => {
    const edge = cluster('b', '10.1.255.0/24', '10.102.0.0/16');
    expect(meshCidrRefusal(pair('a', 'b'), [], fleet(a, edge))?.code).toBe('cidr_overlap');
    const past = cluster('b', '10.2.0.0/24', '10.102.0.0/16');
    expect(meshCidrRefusal(pair('a', 'b'), [], fleet(a, past))).toBeNull();
  });

  it('checks the clusters already meshed with either side too', () => {
    // c is meshed with b and shares a's pod block: a–b would route a's pods into c's.
    const clash = cluster('c', '10.1.0.0/16', '10.103.0.0/16');
    const refusal = meshCidrRefusal(pair('a', 'b'), [pair('c', 'b')], fleet(a, b, clash));
    expect(refusal?.code).toBe('cidr_overlap');
    expect(refusal?.details.clusters).toEqual(['a', 'c']);
    expect(meshCidrRefusal(pair('a', 'b'), [pair('c', 'b')], fleet(a, b, c))).toBeNull();
    // Whichever way the existing link points.
    expect(meshGroup(pair('a', 'b'), [pair('b', 'c')])).toEqual(['a', 'b', 'c']);
    expect(meshCidrRefusal(pair('a', 'b'), [pair('b', 'c')], fleet(a, b, clash))?.code).toBe(
      'cidr_overlap',
    );
  });

  it('does not reach clusters meshed with neither side', () => {
    const clash = cluster('c', '10.1.0.0/16', '10.103.0.0/16');
    expect(meshGroup(pair('a', 'b'), [pair('c', 'd')])).toEqual(['a', 'b']);
    expect(meshCidrRefusal(pair('a', 'b'), [pair('c', 'd')], fleet(a, b, clash))).toBeNull();
  });

  it('does not compare a cluster with itself (its own blocks were checked at create)', () => {
    expect(meshCidrRefusal(pair('a', 'b'), [pair('a', 'b')], fleet(a, b))).toBeNull();
  });

  it('refuses with cidrs_unknown a cluster adopted from reports, naming it', () => {
    const adopted = cluster('b', null, null);
    const refusal = meshCidrRefusal(pair('a', 'b'), [], fleet(a, adopted));
    expect(refusal?.code).toBe('cidrs_unknown');
    expect(refusal?.details).toEqual({ clusterId: 'b' });
    expect(meshCidrRefusal(pair('a', 'x'), [], fleet(a))?.code).toBe('cidrs_unknown');
  });

  describe('new blocks for a meshed cluster', () => {
    const blocks = (clusterId: string, podCidr: string, serviceCidr: string): ClusterBlocks => ({
      clusterId,
      podCidr,
      serviceCidr,
    });
    it('are refused when one overlaps a block of a cluster meshed with it, either way round', () => {
      for (const link of [pair('a', 'b'), pair('b', 'a')]) {
        const refusal = networkRefusal(
          blocks('a', '10.2.0.0/20', '10.150.0.0/16'),
          [link],
          fleet(a, b),
        );
        expect(refusal?.code).toBe('cidr_overlap');
        expect(refusal?.details.blocks).toEqual([
          { clusterId: 'a', field: 'podCidr', cidr: '10.2.0.0/20' },
          { clusterId: 'b', field: 'podCidr', cidr: '10.2.0.0/16' },
        ]);
        const service = networkRefusal(
          blocks('a', '10.60.0.0/16', '10.102.0.0/24'),
          [link],
          fleet(a, b),
        );
        expect(service?.details.blocks).toContainEqual({
          clusterId: 'b',
          field: 'serviceCidr',
          cidr: '10.102.0.0/16',
        });
      }
    });
    it('are taken when apart from every meshed cluster, whatever unmeshed ones hold', () => {
      const clash = cluster('c', '10.50.0.0/16', '10.103.0.0/16');
      expect(
        networkRefusal(
          blocks('a', '10.50.0.0/16', '10.150.0.0/16'),
          [pair('a', 'b'), pair('c', 'd')],
          fleet(a, b, clash),
        ),
      ).toBeNull();
      expect(
        networkRefusal(blocks('a', '10.50.0.0/16', '10.150.0.0/16'), [], fleet(a, b)),
      ).toBeNull();
    });
    it('leave malformed blocks to the caller’s 400, and skip a meshed cluster of unknown blocks', () => {
      expect(
        networkRefusal(blocks('a', 'nope', '10.150.0.0/16'), [pair('a', 'b')], fleet(a, b)),
      ).toBeNull();
      expect(
        networkRefusal(blocks('a', '10.2.0.0/20', '10.150.0.0/16'), [pair('a', 'x')], fleet(a)),
      ).toBeNull();
    });
  });
});
