import { deciderSpec } from '../../../../../libs/kernel/testing/decider-spec';
import { membershipDecider } from './membership.decider';
import { MembershipEvent } from './membership.events';

const spec = deciderSpec(membershipDecider);
const added = (sub: string, role: 'owner' | 'editor' | 'viewer', at = 'T0'): MembershipEvent => ({
  type: 'MemberAdded',
  data: { clusterId: 'c1', sub, role, addedBy: 'alice', at },
});
const put = (sub: string, role: 'owner' | 'editor' | 'viewer', by = 'alice') => ({
  type: 'PutMember' as const,
  data: { clusterId: 'c1', sub, role, by, at: 'T1' },
});
const remove = (sub: string, by = 'alice') => ({
  type: 'RemoveMember' as const,
  data: { clusterId: 'c1', sub, by, at: 'T1' },
});

describe('cluster membership', () => {
  describe('when the cluster has no members yet', () => {
    it('adds the first one, naming who added it', () => {
      spec
        .given()
        .when(put('alice', 'owner', 'root'))
        .then([
          {
            type: 'MemberAdded',
            data: { clusterId: 'c1', sub: 'alice', role: 'owner', addedBy: 'root', at: 'T1' },
          },
        ]);
    });

    it('removes nobody', () => {
      spec.given().when(remove('bob')).thenNothing();
    });
  });

  describe('when alice is the only owner', () => {
    const given = [added('alice', 'owner'), added('bob', 'viewer')];

    it('refuses to demote her with last_owner', () => {
      spec.given(given).when(put('alice', 'editor')).thenRefuses('last_owner', { sub: 'alice' });
    });

    it('refuses to remove her with last_owner', () => {
      spec
        .given(given)
        .when(remove('alice', 'root'))
        .thenRefuses('last_owner', { clusterId: 'c1' });
    });

    it('changes another member’s role, naming who changed it', () => {
      spec
        .given(given)
        .when(put('bob', 'editor', 'alice'))
        .then([
          {
            type: 'MemberRoleChanged',
            data: {
              clusterId: 'c1',
              sub: 'bob',
              from: 'viewer',
              to: 'editor',
              by: 'alice',
              at: 'T1',
            },
          },
        ]);
    });

    it('removes another member', () => {
      spec
        .given(given)
        .when(remove('bob'))
        .then([
          {
            type: 'MemberRemoved',
            data: { clusterId: 'c1', sub: 'bob', role: 'viewer', by: 'alice', at: 'T1' },
          },
        ]);
    });

    it('takes a repeat of her own role as a no-op', () => {
      spec.given(given).when(put('alice', 'owner')).thenNothing();
      spec.given(given).when(put('bob', 'viewer')).thenNothing();
    });
  });

  describe('when there are two owners', () => {
    const given = [added('alice', 'owner'), added('carol', 'owner')];

    it('lets one step down, then protects the other', () => {
      const demoted = spec.given(given).when(put('alice', 'viewer')).thenEvents();
      expect(demoted).toHaveLength(1);
      spec
        .given([...given, ...demoted])
        .when(remove('carol'))
        .thenRefuses('last_owner', { sub: 'carol' });
    });

    it('lets one leave', () => {
      const left = spec.given(given).when(remove('carol')).thenEvents();
      expect(left.map((e) => e.type)).toEqual(['MemberRemoved']);
      const state = spec.given([...given, ...left]).state;
      expect([...state.members.keys()]).toEqual(['alice']);
    });
  });
});
