import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@fleet/kernel/errors';
import { AuthGuard, bearerToken } from './auth.guard';
import { Caller, Role } from './caller';
import { Public, Roles } from './decorators';
import { TokenService } from './token-service';

class DummyController {
  @Public()
  health(): void {}

  @Roles('operator')
  report(): void {}

  @Roles('user', 'auditor')
  readSessions(): void {}

  undecorated(): void {}
}

@Roles('auditor')
class AuditController {
  events(): void {}

  @Roles('user')
  ownBilling(): void {}
}

@Public()
class DocsController {
  docs(): void {}
}

type FakeRequest = { headers: Record<string, string | undefined>; caller?: Caller };
type Handler = (...args: never[]) => unknown;

/** The slice of ExecutionContext the guard reads: the handler, its class and the request. */
function contextFor(
  controller: new () => object,
  handler: Handler,
  request: FakeRequest,
): ExecutionContext {
  return {
    getHandler: () => handler,
    getClass: () => controller,
    getType: () => 'http',
    switchToHttp: () => ({
      getRequest: () => request,
      getResponse: () => ({}),
      getNext: () => () => undefined,
    }),
  } as unknown as ExecutionContext;
}

const tokens = new TokenService('guard-test-secret-that-is-long-enough-000');
const guard = new AuthGuard(tokens, new Reflector());
const proto = DummyController.prototype;

const bearer = async (roles: Role[], clusters: string[] = []): Promise<FakeRequest> => ({
  headers: { authorization: `Bearer ${await tokens.sign({ sub: 'someone', roles, clusters })}` },
});

async function refusal(ctx: ExecutionContext): Promise<DomainError> {
  const err: unknown = await guard.canActivate(ctx).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe('AuthGuard', () => {
  it('lets a @Public() route through without a token', async () => {
    const request: FakeRequest = { headers: {} };
    await expect(
      guard.canActivate(contextFor(DummyController, proto.health, request)),
    ).resolves.toBe(true);
    expect(request.caller).toBeUndefined();
  });

  it('lets every route of a @Public() class through', async () => {
    const ctx = contextFor(DocsController, DocsController.prototype.docs, { headers: {} });
    await expect(guard.canActivate(ctx)).resolves.toBe(true);
  });

  describe('when the route is protected', () => {
    it('refuses a request without an Authorization header (401)', async () => {
      const err = await refusal(contextFor(DummyController, proto.report, { headers: {} }));
      expect(err.kind).toBe('unauthenticated');
      expect(err.message).toMatch(/missing/);
    });

    it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token-without-scheme'])(
      'refuses a malformed header %j (401)',
      async (authorization) => {
        const err = await refusal(
          contextFor(DummyController, proto.report, { headers: { authorization } }),
        );
        expect(err.kind).toBe('unauthenticated');
      },
    );

    it('refuses an invalid token (401)', async () => {
      const other = new TokenService('some-other-secret-that-is-long-enough-1');
      const token = await other.sign({ sub: 'mallory', roles: ['admin'] });
      const err = await refusal(
        contextFor(DummyController, proto.report, {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
      expect(err.kind).toBe('unauthenticated');
      expect(err.message).not.toContain(token);
    });

    it('refuses a respelling of a valid token: padding or other unused bits of its signature (401)', async () => {
      const token = await tokens.sign({ sub: 'someone', roles: ['operator'] });
      const signature = token.slice(token.lastIndexOf('.') + 1);
      const bits = Buffer.from(signature, 'base64url');
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      // Every last character that decodes to the same bytes, but the one issued.
      const siblings = [...alphabet]
        .map((c) => `${signature.slice(0, -1)}${c}`)
        .filter((s) => s !== signature && Buffer.from(s, 'base64url').equals(bits));
      expect(siblings.length).toBeGreaterThan(0);
      const body = token.slice(0, token.lastIndexOf('.') + 1);
      for (const respelt of [...siblings, `${signature}=`, `${signature}==`]) {
        const err = await refusal(
          contextFor(DummyController, proto.report, {
            headers: { authorization: `Bearer ${body}${respelt}` },
          }),
        );
        expect(err.kind).toBe('unauthenticated');
      }
      await expect(
        guard.canActivate(
          contextFor(DummyController, proto.report, {
            headers: { authorization: `Bearer ${token}` },
          }),
        ),
      ).resolves.toBe(true);
    });

    it('remembers a header by its exact text only: a respelling after the token was accepted is still refused', async () => {
      const token = await tokens.sign({ sub: 'someone-else', roles: ['operator'] });
      const header = `Bearer ${token}`;
      expect(bearerToken(header)).toBe(token);
      expect(bearerToken(header)).toBe(token);
      for (const other of [`${header}=`, `${header}==`, 'Bearer a b', 'Basic x', '']) {
        expect(() => bearerToken(other)).toThrow(DomainError);
        expect(() => bearerToken(other)).toThrow(DomainError);
      }
    });

    it('refuses a caller without any of the route roles (403)', async () => {
      const request = await bearer(['user']);
      const err = await refusal(contextFor(DummyController, proto.report, request));
      expect(err.kind).toBe('forbidden');
      expect(err.code).toBe('forbidden');
      expect(request.caller).toBeUndefined();
    });

    it('lets a caller with one of the route roles through and attaches the caller', async () => {
      const request = await bearer(['operator'], ['c1']);
      await expect(
        guard.canActivate(contextFor(DummyController, proto.report, request)),
      ).resolves.toBe(true);
      expect(request.caller).toEqual({ sub: 'someone', roles: ['operator'], clusters: ['c1'] });
    });

    it('accepts the scheme in any case', async () => {
      const request = await bearer(['auditor']);
      request.headers.authorization = request.headers.authorization!.replace('Bearer', 'bearer');
      await expect(
        guard.canActivate(contextFor(DummyController, proto.readSessions, request)),
      ).resolves.toBe(true);
    });

    it('lets an admin through a route that names other roles', async () => {
      const request = await bearer(['admin']);
      await expect(
        guard.canActivate(contextFor(DummyController, proto.report, request)),
      ).resolves.toBe(true);
    });
  });

  describe('when the route has no @Roles', () => {
    it('refuses every non-admin role (403)', async () => {
      for (const role of ['operator', 'user', 'auditor'] as const) {
        const err = await refusal(
          contextFor(DummyController, proto.undecorated, await bearer([role])),
        );
        expect(err.kind).toBe('forbidden');
      }
    });

    it('lets an admin through', async () => {
      const request = await bearer(['admin']);
      await expect(
        guard.canActivate(contextFor(DummyController, proto.undecorated, request)),
      ).resolves.toBe(true);
      expect(request.caller?.roles).toEqual(['admin']);
    });
  });

  describe('when roles are set on the class', () => {
    const audit = AuditController.prototype;

    it('applies them to undecorated handlers', async () => {
      const ctx = contextFor(AuditController, audit.events, await bearer(['auditor']));
      await expect(guard.canActivate(ctx)).resolves.toBe(true);
      const err = await refusal(contextFor(AuditController, audit.events, await bearer(['user'])));
      expect(err.kind).toBe('forbidden');
    });

    it('lets a handler override them', async () => {
      const ctx = contextFor(AuditController, audit.ownBilling, await bearer(['user']));
      await expect(guard.canActivate(ctx)).resolves.toBe(true);
      const err = await refusal(
        contextFor(AuditController, audit.ownBilling, await bearer(['auditor'])),
      );
      expect(err.kind).toBe('forbidden');
    });
  });
});
