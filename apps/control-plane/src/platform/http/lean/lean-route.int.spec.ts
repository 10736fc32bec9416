import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Param, Post, Query, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsOptional, IsString } from 'class-validator';
import { CommandContext } from '@fleet/kernel';
import { Public, Roles } from '../../auth/decorators';
import { TokenService } from '../../auth/token-service';
import { ErrorFilter } from '../../errors/error.filter';
import { Ctx } from '../command-context';
import { installLeanRoutes, LeanRoute, leanRoute, leanRoutesOf } from './lean-route';
import { NoBodyGuard } from '../no-body';
import { PageQuery } from '../page-query.dto';

class NoteDto {
  @IsOptional()
  @IsString()
  note?: string;
}

@Controller('t')
class TestController {
  @Post('things/:id')
  @HttpCode(200)
  @Roles('user')
  touch(@Param('id') id: string, @Body() body: NoteDto, @Ctx() ctx: CommandContext) {
    return { id, note: body.note ?? null, actor: ctx.actor.sub, commandId: ctx.commandId };
  }

  @Post('made')
  @Roles('user')
  make() {
    return { made: true };
  }

  @Post('paged')
  @Roles('user')
  paged(@Query() query: PageQuery) {
    return { limit: query.limit ?? null };
  }

  @Post('guarded')
  @UseGuards(NoBodyGuard)
  guarded() {
    return {};
  }

  @Post('open')
  @Public()
  open() {
    return {};
  }

  helper(): number {
    return 1;
  }
}

@Module({ controllers: [TestController], providers: [NoBodyGuard] })
class TestModule {}

const SECRET = 'lean-route-test-secret-long-enough-0123456';
const tokens = new TokenService(SECRET);

const ROUTES = {
  touch: leanRoute(
    TestController,
    'touch',
    async ({ params, validated, ctx }) => [params.id, await validated(NoteDto), ctx] as const,
  ),
  make: leanRoute(TestController, 'make', async () => [] as const),
  paged: leanRoute(TestController, 'paged', async () => [{} as PageQuery] as const),
  guarded: leanRoute(TestController, 'guarded', async () => [] as const),
  open: leanRoute(TestController, 'open', async () => [] as const),
  helper: leanRoute(TestController, 'helper', async () => [] as const),
};

const build = async (
  routes: readonly LeanRoute[],
  prefix?: string,
): Promise<NestFastifyApplication> => {
  const app = await NestFactory.create<NestFastifyApplication>(
    TestModule,
    new FastifyAdapter({ logger: false }),
    { logger: false, abortOnError: false },
  );
  if (prefix) app.setGlobalPrefix(prefix);
  installLeanRoutes(app, routes, tokens, new ErrorFilter());
  return app;
};

describe('lean routes', () => {
  describe('refuse at start what the lean path does not do', () => {
    it.each([
      ['a route guard of its own', ROUTES.guarded, /__guards__ is not served/],
      ['a public route', ROUTES.open, /only authenticated routes/],
      ['a method that is no route', ROUTES.helper, /not a route handler/],
    ])('%s', async (_name, route, message) => {
      await expect(build([route])).rejects.toThrow(message);
    });

    it('a route Nest registers elsewhere (a global prefix) stops the start', async () => {
      const app = await build([ROUTES.touch], 'api');
      await expect(
        app.init().then(() => app.getHttpAdapter().getInstance().ready()),
      ).rejects.toThrow(/not registered exactly once: POST \/t\/things\/:id/);
      await app.close().catch(() => undefined);
    });
  });

  describe('serve a route as its decorators say', () => {
    let app: NestFastifyApplication;
    beforeAll(async () => {
      app = await build([ROUTES.touch, ROUTES.make, ROUTES.paged]);
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
    });
    afterAll(async () => app.close());

    const inject = async (url: string, roles: string[] | null, payload?: unknown, query = '') => {
      const headers: Record<string, string> = {};
      if (roles) {
        headers.authorization = `Bearer ${await tokens.sign({ sub: 'ann', roles: roles as never })}`;
      }
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const res = await app.inject({
        method: 'POST',
        url: `${url}${query}`,
        headers,
        payload: payload === undefined ? undefined : JSON.stringify(payload),
      });
      return {
        status: res.statusCode,
        body: res.body === '' ? null : (JSON.parse(res.body) as unknown),
      };
    };

    it('lists the routes it serves', () => {
      expect(leanRoutesOf(app)).toEqual(['POST /t/things/:id', 'POST /t/made', 'POST /t/paged']);
    });

    it('runs the handler with its arguments and status', async () => {
      const res = await inject('/t/things/7', ['user'], { note: 'hi' });
      expect(res).toEqual({
        status: 200,
        body: { id: '7', note: 'hi', actor: 'ann', commandId: expect.any(String) },
      });
      expect(await inject('/t/made', ['user'])).toEqual({ status: 201, body: { made: true } });
    });

    it('admits as the guard does: 401 without a token, 403 without the role, admin always', async () => {
      expect(await inject('/t/things/7', null, {})).toMatchObject({
        status: 401,
        body: { error: { code: 'unauthenticated' } },
      });
      expect(await inject('/t/things/7', ['operator'], {})).toMatchObject({
        status: 403,
        body: { error: { code: 'forbidden', message: expect.stringContaining('user') } },
      });
      expect((await inject('/t/things/7', ['admin'], {})).status).toBe(200);
    });

    it('validates the body through the app pipe and refuses a query the handler does not read', async () => {
      expect(await inject('/t/things/7', ['user'], { note: 1, x: 2 })).toMatchObject({
        status: 400,
        body: {
          error: {
            code: 'validation_failed',
            details: { fields: [{ field: 'x' }, { field: 'note' }] },
          },
        },
      });
      expect(await inject('/t/things/7', ['user'], {}, '?x=1')).toMatchObject({
        status: 400,
        body: { error: { details: { fields: [{ field: 'x', problems: [expect.any(String)] }] } } },
      });
      // A handler reading a query DTO takes its parameters.
      expect((await inject('/t/paged', ['user'], undefined, '?limit=5')).status).toBe(201);
    });
  });
});
