import { Caller, Role } from './caller';
import {
  ClusterDemand,
  ClusterRole,
  accessToAny,
  clusterAccess,
  passesWithoutMembership,
} from './cluster-access';

const as = (...roles: Role[]): Caller => ({ sub: 's', roles, clusters: [] });
const READ: ClusterDemand = { needs: 'viewer', reads: true };
const EDIT: ClusterDemand = { needs: 'editor', reads: false };
const OWN: ClusterDemand = { needs: 'owner', reads: false };

describe('the cluster role table', () => {
  // caller, its role on the cluster (null: no member), then the answer for read, edit, own.
  const table: Array<[string, Caller, ClusterRole | null, [string, string, string]]> = [
    ['a viewer', as('user'), 'viewer', ['allow', 'forbidden', 'forbidden']],
    ['an editor', as('user'), 'editor', ['allow', 'allow', 'forbidden']],
    ['an owner', as('user'), 'owner', ['allow', 'allow', 'allow']],
    ['a non-member user', as('user'), null, ['not_found', 'not_found', 'not_found']],
    ['an admin non-member', as('admin'), null, ['allow', 'allow', 'allow']],
    ['an admin viewer', as('admin', 'user'), 'viewer', ['allow', 'allow', 'allow']],
    ['an auditor non-member', as('auditor'), null, ['allow', 'forbidden', 'forbidden']],
    [
      'an auditor who is a viewer',
      as('auditor', 'user'),
      'viewer',
      ['allow', 'forbidden', 'forbidden'],
    ],
    ['an operator non-member', as('operator'), null, ['not_found', 'not_found', 'not_found']],
  ];

  it.each(table)('answers %s as the table says', (_who, caller, role, expected) => {
    expect([READ, EDIT, OWN].map((d) => clusterAccess(caller, d, role))).toEqual(expected);
  });

  it('asks no membership of admins, nor of auditors on reads', () => {
    expect(passesWithoutMembership(as('admin'), OWN)).toBe(true);
    expect(passesWithoutMembership(as('auditor'), READ)).toBe(true);
    expect(passesWithoutMembership(as('auditor'), EDIT)).toBe(false);
    expect(passesWithoutMembership(as('user'), READ)).toBe(false);
  });

  it('over two clusters, allows by either, else forbids a member of one, else hides', () => {
    expect(accessToAny(['not_found', 'allow'])).toBe('allow');
    expect(accessToAny(['forbidden', 'not_found'])).toBe('forbidden');
    expect(accessToAny(['not_found', 'not_found'])).toBe('not_found');
    expect(accessToAny([])).toBe('not_found');
  });
});
