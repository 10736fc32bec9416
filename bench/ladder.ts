/**
 * The no-op cordon's work in steps, as plain Fastify routes on the app's own instance: the
 * app's global hooks run (correlation id, body parser, Idempotency-Key, metrics), Nest's guard,
 * pipes and parameter chain do not, and neither does the lean path's (lean-route.ts). Each
 * step's difference to the one before is its cost; the real cordon's difference to the last
 * step is the lean path's own work (the query check, the DTO through the validation pipe, the
 * handler's arguments). Used by bench:cpu (through inject) and by bench:ab's ladder (over
 * HTTP, in the same process: BENCH_LADDER=1 on the bench server).
 *
 *   echo       the hooks alone
 *   token      + the bearer token verified (the app's cache) and the admin role
 *   view       + the Node view of the node (a read, as GET /v1/nodes/{id}, without the route)
 *   command    + the id check, the command context and the no-op CordonNode (no view)
 *   cordon     + both: the cordon's whole work without the lean path
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { NodeCommands } from '../apps/control-plane/src/nodes/nodes.commands';
import { NodesQueries } from '../apps/control-plane/src/nodes/nodes.queries';
import {
  commandContextOf,
  PlatformRequest,
} from '../apps/control-plane/src/platform/http/command-context';
import { checkId } from '../apps/control-plane/src/platform/http/ids';

export const LADDER_STEPS = ['echo', 'token', 'view', 'command', 'cordon'] as const;
export type LadderStep = (typeof LADDER_STEPS)[number];

/** The path of a step for the node `nodeId` (the steps that need none ignore it). */
export const ladderPath = (step: LadderStep, nodeId: string): string =>
  step === 'echo' || step === 'token' ? `/bench-ladder/${step}` : `/bench-ladder/${step}/${nodeId}`;

/** Adds the steps' routes; call after the app initialises and before Fastify is ready. */
export const addCordonLadder = (app: NestFastifyApplication): void => {
  const fastify = app.getHttpAdapter().getInstance();
  const tokens = app.get(TokenService);
  const commands = app.get(NodeCommands);
  const queries = app.get(NodesQueries);
  type Req = PlatformRequest & {
    headers: Record<string, string | string[] | undefined>;
    params: unknown;
    body: unknown;
  };
  const admitted = async (request: Req): Promise<void> => {
    const header = request.headers.authorization;
    if (typeof header !== 'string') throw new Error('no token');
    const caller = await tokens.verify(header.slice('Bearer '.length));
    if (!caller.roles.includes('admin')) throw new Error('not an admin');
    request.caller = caller;
  };
  const nodeIdOf = (request: Req): string =>
    checkId('nodeId', (request.params as { nodeId: string }).nodeId);
  const command = async (request: Req): Promise<string> => {
    await admitted(request);
    const nodeId = nodeIdOf(request);
    const ctx = commandContextOf(request);
    const reason = (request.body as { reason?: string }).reason ?? null;
    await commands.execute(
      nodeId,
      { type: 'CordonNode', data: { reason, at: ctx.now.toISOString() } },
      ctx,
    );
    return nodeId;
  };
  fastify.post('/bench-ladder/echo', async (request) => ({
    ok: true,
    size: Object.keys(request.body as object).length,
  }));
  fastify.post('/bench-ladder/token', async (request) => {
    await admitted(request as unknown as Req);
    return { ok: true };
  });
  fastify.post('/bench-ladder/view/:nodeId', async (request) => {
    await admitted(request as unknown as Req);
    return queries.get(nodeIdOf(request as unknown as Req));
  });
  fastify.post('/bench-ladder/command/:nodeId', async (request) => {
    await command(request as unknown as Req);
    return { ok: true };
  });
  fastify.post('/bench-ladder/cordon/:nodeId', async (request) =>
    queries.get(await command(request as unknown as Req)),
  );
};
