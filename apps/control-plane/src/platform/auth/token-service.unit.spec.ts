import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { DomainError } from '@fleet/kernel/errors';
import { TokenService } from './token-service';

const SECRET = 'unit-test-secret-that-is-long-enough-0123456789';
const service = new TokenService(SECRET);
const key = new TextEncoder().encode(SECRET);
const now = (): number => Math.floor(Date.now() / 1000);

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs arbitrary claims with our key, bypassing TokenService's own checks. */
const raw = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(key);

async function refusal(token: string): Promise<DomainError> {
  const err: unknown = await service.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  const domainError = err as DomainError;
  expect(domainError.kind).toBe('unauthenticated');
  expect(domainError.code).toBe('unauthenticated');
  // A refusal must never leak the credential into logs or responses.
  if (token.length > 0) expect(domainError.message).not.toContain(token);
  return domainError;
}

describe('TokenService', () => {
  describe('when the token was signed by this service', () => {
    it('yields the caller it was issued for', async () => {
      const token = await service.sign({
        sub: 'op-1',
        roles: ['operator'],
        clusters: ['c1', 'c2'],
      });
      await expect(service.verify(token)).resolves.toEqual({
        sub: 'op-1',
        roles: ['operator'],
        clusters: ['c1', 'c2'],
      });
    });

    it('defaults clusters to an empty list', async () => {
      const token = await service.sign({ sub: 'alice', roles: ['user', 'auditor'] });
      await expect(service.verify(token)).resolves.toEqual({
        sub: 'alice',
        roles: ['user', 'auditor'],
        clusters: [],
      });
    });

    it('expires after a day unless told otherwise', async () => {
      const token = await service.sign({ sub: 'alice', roles: ['user'] });
      const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
      expect(payload.exp - now()).toBeGreaterThan(3600 * 24 - 5);
      expect(payload.exp - now()).toBeLessThanOrEqual(3600 * 24);
    });
  });

  it('accepts a token without a clusters claim', async () => {
    const token = await raw({ sub: 'alice', roles: ['user'], exp: now() + 60 });
    await expect(service.verify(token)).resolves.toEqual({
      sub: 'alice',
      roles: ['user'],
      clusters: [],
    });
  });

  it('refuses an expired token', async () => {
    const token = await raw({ sub: 'alice', roles: ['user'], exp: now() - 120 });
    expect((await refusal(token)).message).toMatch(/expired/);
  });

  it('refuses a token not valid yet, saying so, and a malformed nbf as invalid', async () => {
    const early = await raw({ sub: 'alice', roles: ['user'], exp: now() + 600, nbf: now() + 300 });
    expect((await refusal(early)).message).toBe('token is not valid yet (nbf)');
    const bad = await raw({ sub: 'alice', roles: ['user'], exp: now() + 600, nbf: 'soon' });
    expect((await refusal(bad)).message).toBe('token claim nbf is invalid or missing');
  });

  it('refuses a token without exp', async () => {
    const token = await raw({ sub: 'alice', roles: ['user'] });
    expect((await refusal(token)).message).toMatch(/exp/);
  });

  it('refuses a token signed with another secret', async () => {
    const other = new TokenService('another-secret-that-is-long-enough-9876543210');
    const token = await other.sign({ sub: 'mallory', roles: ['admin'] });
    expect((await refusal(token)).message).toMatch(/signature/);
  });

  it('refuses an unsigned token (alg none)', async () => {
    const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: 'mallory', roles: ['admin'], exp: now() + 60 })}.`;
    await refusal(token);
  });

  it('refuses an RS256 header even when HMAC-signed with our secret', async () => {
    const signingInput = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url({ sub: 'mallory', roles: ['admin'], exp: now() + 60 })}`;
    const signature = createHmac('sha256', SECRET).update(signingInput).digest('base64url');
    expect((await refusal(`${signingInput}.${signature}`)).message).toMatch(/algorithm/);
  });

  it('refuses a token without sub', async () => {
    const token = await raw({ roles: ['admin'], exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/sub/);
  });

  it('refuses an empty sub', async () => {
    const token = await raw({ sub: '', roles: ['admin'], exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/sub/);
  });

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['a control character', 'alice\u0000'],
    ['a C1 control character', 'alice\u0085x'],
    ['DEL', 'al\u007fice'],
    ['leading whitespace', ' alice'],
    ['trailing whitespace', 'alice\t'],
  ])('refuses a sub of %s, saying what a sub must be', async (_what, sub) => {
    const token = await raw({ sub, roles: ['user'], exp: now() + 60 });
    expect((await refusal(token)).message).toBe(
      'token claim sub must be 1-256 characters, with no control characters and no whitespace at either end',
    );
    await expect(service.sign({ sub, roles: ['user'] })).rejects.toThrow(/sub/);
  });

  it.each(['bob+ops@example.com', 'alice smith', 'a'.repeat(256), 'Jürgen 山田', 'x'])(
    'accepts a sub of %j',
    async (sub) => {
      const token = await service.sign({ sub, roles: ['user'] });
      await expect(service.verify(token)).resolves.toMatchObject({ sub });
    },
  );

  it('refuses a token with no roles', async () => {
    const token = await raw({ sub: 'alice', roles: [], exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/roles/);
  });

  it('refuses a token without a roles claim', async () => {
    const token = await raw({ sub: 'alice', exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/roles/);
  });

  it('refuses a token with an unknown role', async () => {
    const token = await raw({ sub: 'alice', roles: ['user', 'root'], exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/unknown role/);
  });

  it('refuses clusters that are not a list of strings', async () => {
    const token = await raw({ sub: 'op', roles: ['operator'], clusters: 'c1', exp: now() + 60 });
    expect((await refusal(token)).message).toMatch(/clusters/);
  });

  it.each(['garbage', '', 'a.b.c', 'eyJhbGciOiJIUzI1NiJ9.e30'])('refuses %j', async (token) => {
    expect((await refusal(token)).message).toMatch(/malformed|invalid/);
  });

  it('refuses to sign a token with an unknown role', async () => {
    await expect(
      service.sign({ sub: 'alice', roles: ['root' as unknown as 'admin'] }),
    ).rejects.toThrow(/role/);
  });
});
