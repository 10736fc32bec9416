import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, assertNever } from '@fleet/kernel';
import { ClusterRole, MembershipEvent, membershipCodec } from './membership.events';

/** One command adds a member or changes its role (PUT); another removes one (DELETE). */
export type MembershipCommand =
  | {
      type: 'PutMember';
      data: { clusterId: string; sub: string; role: ClusterRole; by: string; at: string };
    }
  | { type: 'RemoveMember'; data: { clusterId: string; sub: string; by: string; at: string } };

export type Member = {
  readonly sub: string;
  readonly role: ClusterRole;
  readonly addedBy: string;
  readonly addedAt: string;
};

/** Members in the order they were added (a Map keeps it). */
export type MembershipState = { readonly members: ReadonlyMap<string, Member> };

const ownerCount = (state: MembershipState): number => {
  let owners = 0;
  for (const member of state.members.values()) if (member.role === 'owner') owners++;
  return owners;
};

const lastOwner = (clusterId: string, sub: string): DomainError =>
  new DomainError(
    'last_owner',
    `${sub} is the last owner of cluster ${clusterId}: make another member owner first`,
    'conflict',
    { clusterId, sub },
  );

/** Whether taking `sub`'s owner role away would leave the cluster without an owner. */
const isLastOwner = (state: MembershipState, sub: string): boolean =>
  state.members.get(sub)?.role === 'owner' && ownerCount(state) === 1;

export const decideMembership = (
  command: MembershipCommand,
  state: MembershipState,
): MembershipEvent[] => {
  switch (command.type) {
    case 'PutMember': {
      const { clusterId, sub, role, by, at } = command.data;
      const member = state.members.get(sub);
      if (!member)
        return [{ type: 'MemberAdded', data: { clusterId, sub, role, addedBy: by, at } }];
      if (member.role === role) return []; // asked again: already so
      if (isLastOwner(state, sub)) throw lastOwner(clusterId, sub);
      return [
        {
          type: 'MemberRoleChanged',
          data: { clusterId, sub, from: member.role, to: role, by, at },
        },
      ];
    }
    case 'RemoveMember': {
      const { clusterId, sub, by, at } = command.data;
      const member = state.members.get(sub);
      if (!member) return []; // already gone
      if (isLastOwner(state, sub)) throw lastOwner(clusterId, sub);
      return [{ type: 'MemberRemoved', data: { clusterId, sub, role: member.role, by, at } }];
    }
    default:
      return assertNever(command, 'membership command');
  }
};

export const evolveMembership = (
  state: MembershipState,
  event: MembershipEvent,
): MembershipState => {
  const members = new Map(state.members);
  switch (event.type) {
    case 'MemberAdded': {
      const { sub, role, addedBy, at } = event.data;
      members.set(sub, { sub, role, addedBy, addedAt: at });
      break;
    }
    case 'MemberRoleChanged': {
      const member = members.get(event.data.sub);
      if (member) members.set(member.sub, { ...member, role: event.data.to });
      break;
    }
    case 'MemberRemoved':
      members.delete(event.data.sub);
      break;
    default:
      return assertNever(event, 'membership event');
  }
  return { members };
};

export const membershipDecider: Decider<MembershipCommand, MembershipEvent, MembershipState> = {
  initialState: () => ({ members: new Map() }),
  evolve: evolveMembership,
  decide: decideMembership,
};

export const membershipAggregate: Aggregate<MembershipCommand, MembershipEvent, MembershipState> = {
  name: 'cluster-membership',
  decider: membershipDecider,
  codec: membershipCodec,
};
