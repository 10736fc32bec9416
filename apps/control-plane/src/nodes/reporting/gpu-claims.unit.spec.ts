import { DomainError } from '@fleet/kernel';
import { ClaimGpuCards, GpuClaimsEvent, gpuClaimsDecider } from './gpu-claims';

const at = '2026-12-07T12:00:00.000Z';
/** [uuid, nodeId] pairs as the event groups them: per node, in first-seen order. */
const byNode = (pairs: Array<[string, string]>) => {
  const nodes = new Map<string, { nodeId: string; since: null; uuids: string[] }>();
  for (const [uuid, nodeId] of pairs) {
    const n = nodes.get(nodeId) ?? { nodeId, since: null, uuids: [] };
    n.uuids.push(uuid);
    nodes.set(nodeId, n);
  }
  return [...nodes.values()];
};
const claimed = (...claims: Array<[string, string]>): GpuClaimsEvent => ({
  type: 'GpuCardsClaimed',
  data: {
    clusterId: 'c1',
    claims: byNode(claims),
    at,
  },
});
const claim = (
  claims: Array<[string, string]>,
  released: Array<[string, string]> = [],
): ClaimGpuCards => ({
  type: 'ClaimGpuCards',
  data: {
    clusterId: 'c1',
    claims: byNode(claims),
    released: released.map(([uuid, holder]) => ({ uuid, holder })),
    at,
  },
});
const given = (events: GpuClaimsEvent[]) => ({
  when: (command: ClaimGpuCards) =>
    gpuClaimsDecider.decide(
      command,
      events.reduce(gpuClaimsDecider.evolve, gpuClaimsDecider.initialState()),
    ),
});

describe("a cluster's GPU claims", () => {
  it('records the claim of cards nobody claimed', () => {
    expect(
      given([]).when(
        claim([
          ['g1', 'n1'],
          ['g2', 'n1'],
        ]),
      ),
    ).toEqual([claimed(['g1', 'n1'], ['g2', 'n1'])]);
  });

  it("records nothing for a node's own cards claimed again (a retried report)", () => {
    expect(given([claimed(['g1', 'n1'])]).when(claim([['g1', 'n1']]))).toEqual([]);
  });

  it('records only the cards that change hands', () => {
    expect(
      given([claimed(['g1', 'n1'])]).when(
        claim([
          ['g1', 'n1'],
          ['g2', 'n1'],
        ]),
      ),
    ).toEqual([claimed(['g2', 'n1'])]);
  });

  it('refuses a card another node claimed, naming that node', () => {
    const refusal = (() => {
      try {
        given([claimed(['g1', 'n1'])]).when(claim([['g1', 'n2']]));
      } catch (e) {
        return e;
      }
    })();
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({
      code: 'gpu_uuid_conflict',
      details: { uuid: 'g1', nodeId: 'n1' },
    });
  });

  it('gives a card to the claimant that found its holder released it', () => {
    expect(given([claimed(['g1', 'n1'])]).when(claim([['g1', 'n2']], [['g1', 'n1']]))).toEqual([
      claimed(['g1', 'n2']),
    ]);
  });

  it("refuses the whole report's claim when one card of one of its nodes is another's", () => {
    const events = [claimed(['g9', 'n9'])];
    expect(() =>
      given(events).when(
        claim([
          ['g1', 'n1'],
          ['g2', 'n2'],
          ['g9', 'n2'],
        ]),
      ),
    ).toThrow(/GPU g9 .* claimed by node n9/);
  });

  it('groups the cards it records by node', () => {
    expect(
      given([]).when(
        claim([
          ['g1', 'n1'],
          ['g2', 'n2'],
          ['g3', 'n1'],
        ]),
      ),
    ).toEqual([
      {
        type: 'GpuCardsClaimed',
        data: {
          clusterId: 'c1',
          claims: [
            { nodeId: 'n1', since: null, uuids: ['g1', 'g3'] },
            { nodeId: 'n2', since: null, uuids: ['g2'] },
          ],
          at,
        },
      },
    ]);
  });

  it('refuses when the card changed hands again since the release was checked (a race lost)', () => {
    const events = [claimed(['g1', 'n1']), claimed(['g1', 'n3'])];
    expect(() => given(events).when(claim([['g1', 'n2']], [['g1', 'n1']]))).toThrow(
      /claimed by node n3/,
    );
  });
});
