import { DomainError } from '@fleet/kernel/errors';
import { TokenService } from './token-service';

const SECRET = 'unit-test-secret-that-is-long-enough-0123456789';

describe('TokenService: remembered verifications', () => {
  afterEach(() => jest.useRealTimers());

  it('gives each call a caller of its own', async () => {
    const service = new TokenService(SECRET);
    const token = await service.sign({ sub: 'op', roles: ['operator'], clusters: ['c1'] });
    const first = await service.verify(token);
    first.roles.push('admin');
    first.clusters.push('c2');
    await expect(service.verify(token)).resolves.toEqual({
      sub: 'op',
      roles: ['operator'],
      clusters: ['c1'],
    });
  });

  it('refuses a remembered token once it has expired', async () => {
    jest.useFakeTimers({ now: new Date('2026-12-02T10:00:00Z') });
    const service = new TokenService(SECRET);
    const token = await service.sign({ sub: 'op', roles: ['operator'] }, 60);
    await expect(service.verify(token)).resolves.toMatchObject({ sub: 'op' });
    jest.setSystemTime(new Date('2026-12-02T10:00:59Z'));
    await expect(service.verify(token)).resolves.toMatchObject({ sub: 'op' });
    jest.setSystemTime(new Date('2026-12-02T10:01:00Z'));
    const err = await service.verify(token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).message).toBe('token has expired');
  });

  it('never takes a token signed with another secret for a remembered one', async () => {
    const ours = new TokenService(SECRET);
    const theirs = new TokenService(`${SECRET}-other`);
    const token = await theirs.sign({ sub: 'op', roles: ['admin'] });
    await expect(theirs.verify(token)).resolves.toMatchObject({ sub: 'op' });
    await expect(ours.verify(token)).rejects.toBeInstanceOf(DomainError);
  });

  it('knows a token only once verified, until it expires, with a caller of its own each time', async () => {
    jest.useFakeTimers({ now: new Date('2026-12-02T10:00:00Z') });
    const service = new TokenService(SECRET);
    const token = await service.sign({ sub: 'op', roles: ['operator'], clusters: ['c1'] }, 60);
    expect(service.known(token)).toBeUndefined();
    await service.verify(token);
    const first = service.known(token)!;
    expect(first).toEqual({ sub: 'op', roles: ['operator'], clusters: ['c1'] });
    first.roles.push('admin');
    expect(service.known(token)?.roles).toEqual(['operator']);
    expect(service.known(`${token}x`)).toBeUndefined();
    jest.setSystemTime(new Date('2026-12-02T10:01:00Z'));
    expect(service.known(token)).toBeUndefined();
    await expect(service.verify(token)).rejects.toMatchObject({ message: 'token has expired' });
  });
});
