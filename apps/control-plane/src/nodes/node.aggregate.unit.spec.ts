import fc from 'fast-check';
import { uuidFrom } from '@fleet/kernel';
import { nodeIdOf, nodeRefOf } from './node.aggregate';
import { nodeStreamId } from './node.events';

describe('node identity: (cluster, hostname) -> node id and stream id', () => {
  // The same ref object once derived: the report path's NodeRefs (reporting/node-refs.unit.spec.ts).
  it('is the derived id every time', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (clusterId, hostname) => {
        const ref = nodeRefOf(clusterId, hostname);
        expect(ref.nodeId).toBe(uuidFrom('node', clusterId, hostname));
        expect(ref.streamId).toBe(nodeStreamId(ref.nodeId));
        expect(nodeRefOf(clusterId, hostname)).toEqual(ref);
        expect(nodeIdOf(clusterId, hostname)).toBe(ref.nodeId);
      }),
    );
  });

  it('gives distinct nodes to distinct pairs, however their parts could be joined', () => {
    const pairs: Array<[string, string]> = [
      ['c1', 'gpu-01'],
      ['c1', 'gpu-02'],
      ['c2', 'gpu-01'],
      ['c1g', 'pu-01'],
      ['c1\u0000gpu', '01'],
      ['c1', '\u0000gpu-01'],
    ];
    const ids = pairs.map(([c, h]) => nodeIdOf(c, h));
    expect(new Set(ids).size).toBe(pairs.length);
  });
});
