import { assertNever } from '@fleet/kernel';
import { ClusterRole } from '../../platform/auth/cluster-access';
import { MembershipEvent } from './membership.events';

export type MemberDoc = { sub: string; role: ClusterRole; addedBy: string; addedAt: string };

/**
 * What the cluster document says of its members. `memberSubs` repeats the subs as an array,
 * so the list filters `{memberSubs: sub}` (a sub may hold dots: never a field name).
 */
export type MembersFields = { members: MemberDoc[]; memberSubs: string[] };

export const noMembers = (): MembersFields => ({ members: [], memberSubs: [] });

const fields = (members: MemberDoc[]): MembersFields => ({
  members,
  memberSubs: members.map((m) => m.sub),
});

/** Pure: the members after `event` (a repeat changes nothing). */
export const projectMembers = (before: MembersFields, event: MembershipEvent): MembersFields => {
  const { sub } = event.data;
  switch (event.type) {
    case 'MemberAdded': {
      if (before.memberSubs.includes(sub)) return before;
      const { role, addedBy, at } = event.data;
      return fields([...before.members, { sub, role, addedBy, addedAt: at }]);
    }
    case 'MemberRoleChanged':
      return fields(before.members.map((m) => (m.sub === sub ? { ...m, role: event.data.to } : m)));
    case 'MemberRemoved':
      return fields(before.members.filter((m) => m.sub !== sub));
    default:
      return assertNever(event, 'membership event');
  }
};

/** The role `sub` holds according to the document, null when it is no member. */
export const roleOn = (doc: Partial<MembersFields> | null, sub: string): ClusterRole | null =>
  doc?.members?.find((m) => m.sub === sub)?.role ?? null;
