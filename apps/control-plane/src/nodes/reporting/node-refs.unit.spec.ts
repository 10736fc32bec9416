import fc from 'fast-check';
import { nodeRefOf } from '../node.aggregate';
import { NodeRefs } from './node-refs';

describe('the refs a report keeps', () => {
  it('are the derived refs, and the same ref object once derived', () => {
    const refs = new NodeRefs();
    fc.assert(
      fc.property(fc.string(), fc.string(), (clusterId, hostname) => {
        const ref = refs.of(clusterId, hostname);
        expect(ref).toEqual(nodeRefOf(clusterId, hostname));
        expect(refs.of(clusterId, hostname)).toBe(ref);
      }),
    );
  });
});
