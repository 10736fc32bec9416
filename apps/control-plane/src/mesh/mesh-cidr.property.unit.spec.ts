import fc from 'fast-check';
import { checkCidr, cidrsOverlap } from '../clusters';
import { ClusterBlocks, meshCidrRefusal } from './mesh-cidr.rule';

const dotted = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');

/** A valid block /lo../hi: any address with its host bits cleared. */
const block = (lo: number, hi: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: lo, max: hi }))
    .map(([address, prefix]) => {
      const size = 2 ** (32 - prefix);
      return `${dotted(address - (address % size))}/${prefix}`;
    });

const parse = (text: string) => {
  const parsed = checkCidr(text);
  if (!('cidr' in parsed)) throw new Error(`${text}: ${parsed.problem}`);
  return parsed.cidr;
};

/** The address set of a block, each address in it, for small blocks only. */
const addresses = (text: string): Set<number> => {
  const { base, prefix } = parse(text);
  return new Set(Array.from({ length: 2 ** (32 - prefix) }, (_, i) => base + i));
};

/** A second model: the shorter block holds the other's base under its own mask. */
const byMask = (a: string, b: string): boolean => {
  const [x, y] = [parse(a), parse(b)];
  const prefix = Math.min(x.prefix, y.prefix);
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (x.base & mask) >>> 0 === (y.base & mask) >>> 0;
};

describe('the CIDR overlap rule, against models', () => {
  it('agrees with a brute-force address set on blocks /22 to /30 of one /20', () => {
    // Blocks drawn inside 10.0.0.0/20, so that they meet often and each set stays small.
    const inside = fc
      .tuple(fc.integer({ min: 0, max: 4095 }), fc.integer({ min: 22, max: 30 }))
      .map(([offset, prefix]) => {
        const size = 2 ** (32 - prefix);
        const address = 0x0a000000 + offset;
        return `${dotted(address - (address % size))}/${prefix}`;
      });
    fc.assert(
      fc.property(inside, inside, (a, b) => {
        const [sa, sb] = [addresses(a), addresses(b)];
        const shared = [...sa].some((n) => sb.has(n));
        expect(cidrsOverlap(parse(a), parse(b))).toBe(shared);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with the mask model on blocks /8 to /30 anywhere', () => {
    fc.assert(
      fc.property(block(8, 30), block(8, 30), (a, b) => {
        expect(cidrsOverlap(parse(a), parse(b))).toBe(byMask(a, b));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a mesh exactly when two clusters of the group share an address', () => {
    const cluster = fc.tuple(block(8, 30), block(8, 30));
    fc.assert(
      fc.property(cluster, cluster, cluster, ([ap, as], [bp, bs], [cp, cs]) => {
        // a–b asked, c already meshed with b: the group is a, b and c.
        const blocks = new Map<string, ClusterBlocks>([
          ['a', { clusterId: 'a', podCidr: ap, serviceCidr: as }],
          ['b', { clusterId: 'b', podCidr: bp, serviceCidr: bs }],
          ['c', { clusterId: 'c', podCidr: cp, serviceCidr: cs }],
        ]);
        const of: Record<string, string[]> = { a: [ap, as], b: [bp, bs], c: [cp, cs] };
        const clash = [
          ['a', 'b'],
          ['a', 'c'],
          ['b', 'c'],
        ].some(([x, y]) => of[x].some((p) => of[y].some((q) => byMask(p, q))));
        const refusal = meshCidrRefusal(
          { fromClusterId: 'a', toClusterId: 'b' },
          [{ fromClusterId: 'c', toClusterId: 'b' }],
          blocks,
        );
        expect(refusal?.code ?? null).toBe(clash ? 'cidr_overlap' : null);
      }),
      { numRuns: 1000 },
    );
  });
});
