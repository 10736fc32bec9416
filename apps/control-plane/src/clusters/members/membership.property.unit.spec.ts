import fc from 'fast-check';
import { DomainError } from '@fleet/kernel';
import { Caller } from '../../platform/auth/caller';
import { CLUSTER_ROLES, clusterAccess } from '../../platform/auth/cluster-access';
import { MembershipCommand, MembershipState, membershipDecider } from './membership.decider';
import { MembersFields, noMembers, projectMembers, roleOn } from './members.projection';

const SUBS = ['alice', 'bob', 'carol', 'd.o.t', 'eve'];
const sub = fc.constantFrom(...SUBS);
const command: fc.Arbitrary<MembershipCommand> = fc.oneof(
  fc
    .record({ sub, role: fc.constantFrom(...CLUSTER_ROLES), by: sub })
    .map(
      ({ sub, role, by }) =>
        ({ type: 'PutMember', data: { clusterId: 'c1', sub, role, by, at: 'T' } }) as const,
    ),
  fc
    .record({ sub, by: sub })
    .map(
      ({ sub, by }) =>
        ({ type: 'RemoveMember', data: { clusterId: 'c1', sub, by, at: 'T' } }) as const,
    ),
);
const user = (s: string): Caller => ({ sub: s, roles: ['user'], clusters: [] });
const READ = { needs: 'viewer', reads: true } as const;

const owners = (state: MembershipState) =>
  [...state.members.values()].filter((m) => m.role === 'owner').length;

describe('cluster membership, over random command sequences', () => {
  it('never leaves a cluster that had an owner without one, and lets only members read it', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(command, { maxLength: 60 }), (founded, commands) => {
        let state = membershipDecider.initialState();
        let doc: MembersFields = noMembers();
        const run = (c: MembershipCommand) => {
          let events;
          try {
            events = membershipDecider.decide(c, state);
          } catch (error) {
            // A refusal is last_owner only, and it appends nothing.
            expect((error as DomainError).code).toBe('last_owner');
            return;
          }
          for (const e of events) {
            state = membershipDecider.evolve(state, e);
            doc = projectMembers(doc, e);
          }
        };
        if (founded)
          run({
            type: 'PutMember',
            data: { clusterId: 'c1', sub: 'alice', role: 'owner', by: 'alice', at: 'T' },
          });
        let hadOwner = owners(state) > 0;
        for (const c of commands) {
          run(c);
          if (hadOwner) expect(owners(state)).toBeGreaterThanOrEqual(1);
          hadOwner ||= owners(state) > 0;
          for (const s of SUBS) {
            // The guard reads the projected document: it agrees with the decider's state.
            const role = roleOn(doc, s);
            expect(role).toBe(state.members.get(s)?.role ?? null);
            const access = clusterAccess(user(s), READ, role);
            expect(access).toBe(state.members.has(s) ? 'allow' : 'not_found');
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
