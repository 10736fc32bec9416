import { Caller, hasRole, isPrivileged, mayReportFor } from './caller';

const caller = (roles: Caller['roles'], clusters: string[] = []): Caller => ({
  sub: 'x',
  roles,
  clusters,
});

describe('caller', () => {
  it('hasRole is true when any of the roles is held', () => {
    expect(hasRole(caller(['user', 'auditor']), 'admin', 'auditor')).toBe(true);
    expect(hasRole(caller(['user']), 'admin', 'auditor')).toBe(false);
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
