import 'reflect-metadata';
import {
  ArgumentsHost,
  Catch,
  Controller,
  ExceptionFilter,
  Get,
  INestApplication,
  Module,
} from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyReply } from 'fastify';
import { DomainError } from '@fleet/kernel/errors';
import { AuthModule } from './auth.module';
import { Caller } from './caller';
import { CurrentCaller, Public, Roles } from './decorators';
import { TokenService } from './token-service';

const SECRET = 'module-test-secret-that-is-long-enough-777';

@Controller()
class ProbeController {
  @Public()
  @Get('health/live')
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Roles('operator')
  @Get('whoami')
  whoami(@CurrentCaller() caller: Caller): Caller {
    return caller;
  }

  @Get('admin-only')
  adminOnly(): { ok: true } {
    return { ok: true };
  }
}

// Stands in for the real filter (written elsewhere) so the test can see the kinds.
@Catch(DomainError)
class KindFilter implements ExceptionFilter {
  catch(error: DomainError, host: ArgumentsHost): void {
    const status = { unauthenticated: 401, forbidden: 403 }[error.kind as string] ?? 500;
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send({ code: error.code });
  }
}

@Module({
  imports: [AuthModule.forRoot(SECRET)],
  controllers: [ProbeController],
  providers: [{ provide: APP_FILTER, useClass: KindFilter }],
})
class ProbeModule {}

describe('AuthModule in a Fastify app', () => {
  let app: NestFastifyApplication;
  const tokens = new TokenService(SECRET);

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter(), {
      logger: false,
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(() => (app as INestApplication | undefined)?.close());

  const get = async (url: string, token?: string) =>
    app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('serves a @Public() route without a token', async () => {
    expect((await get('/health/live')).statusCode).toBe(200);
  });

  it('refuses a protected route without a token', async () => {
    const res = await get('/whoami');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 'unauthenticated' });
  });

  it('hands the verified caller to the handler', async () => {
    const token = await tokens.sign({ sub: 'op-1', roles: ['operator'], clusters: ['c1'] });
    const res = await get('/whoami', token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ sub: 'op-1', roles: ['operator'], clusters: ['c1'] });
  });

  it('keeps an undecorated route for admins', async () => {
    expect(
      (await get('/admin-only', await tokens.sign({ sub: 'u', roles: ['user'] }))).statusCode,
    ).toBe(403);
    expect(
      (await get('/admin-only', await tokens.sign({ sub: 'a', roles: ['admin'] }))).statusCode,
    ).toBe(200);
  });

  it('exports TokenService for other modules', () => {
    expect(app.get(TokenService)).toBeInstanceOf(TokenService);
  });
});

describe('AuthModule.forRootAsync', () => {
  it('takes the secret from a factory', async () => {
    @Module({ imports: [AuthModule.forRootAsync({ useFactory: () => SECRET })] })
    class AsyncModule {}
    const app = await NestFactory.create(AsyncModule, new FastifyAdapter(), { logger: false });
    try {
      await app.init();
      const token = await new TokenService(SECRET).sign({ sub: 'a', roles: ['admin'] });
      await expect(app.get(TokenService).verify(token)).resolves.toMatchObject({ sub: 'a' });
    } finally {
      await app.close();
    }
  });
});
