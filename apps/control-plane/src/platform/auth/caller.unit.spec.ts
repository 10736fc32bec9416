import { Caller, hasRole, isOwner, isPrivileged, mayReportFor } from './caller';

const caller = (roles: Caller['roles'], clusters: string[] = []): Caller => ({
  sub: 'x',
  roles,
  clusters,
});

describe('caller', () => {
  it('hasRole is true when any of the roles is held', () => {
    expect(hasRole(caller(['user', 'auditor']), ['admin', 'auditor'])).toBe(true);
    expect(hasRole(caller(['user']), ['admin', 'auditor'])).toBe(false);
  });

  it('only admin is privileged', () => {
    expect(isPrivileged(caller(['admin']))).toBe(true);
    expect(isPrivileged(caller(['operator', 'auditor', 'user']))).toBe(false);
  });

  describe('mayReportFor', () => {
    it('lets an operator report for the clusters in its token only', () => {
      expect(mayReportFor(caller(['operator'], ['c1']), 'c1')).toBe(true);
      expect(mayReportFor(caller(['operator'], ['c1']), 'c2')).toBe(false);
    });

    it('does not let a non-operator report for a listed cluster', () => {
      expect(mayReportFor(caller(['user'], ['c1']), 'c1')).toBe(false);
    });

    it('lets an admin report for any cluster', () => {
      expect(mayReportFor(caller(['admin']), 'c9')).toBe(true);
    });
  });
});

describe('isOwner: the one format of a sub, an owner and a tenant', () => {
  it.each([
    'alice',
    'bob+ops@example.com',
    'alice smith',
    'Jürgen 山田',
    'a'.repeat(256),
    '😀'.repeat(256),
  ])('takes %j', (owner) => expect(isOwner(owner)).toBe(true));

  it.each([
    '',
    'a'.repeat(257),
    ' alice',
    'alice ',
    '\u00a0alice',
    'ali\nce',
    'ali\u0000ce',
    'ali\u007fce',
    'ali\u009fce',
    ' ',
  ])('refuses %j', (owner) => expect(isOwner(owner)).toBe(false));

  it('refuses what is not a string', () => {
    for (const value of [null, undefined, 1, ['alice'], { sub: 'alice' }]) {
      expect(isOwner(value)).toBe(false);
    }
  });
});
