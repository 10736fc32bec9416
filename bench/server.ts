/**
 * A benchmark server in a process of its own, so its RSS and CPU are its alone and the load
 * generator does not share its event loop. Forked by bench/procs.ts with an IPC channel:
 *   BENCH_SERVER=bare  a bare Fastify 5 server: POST routes that parse JSON and answer a small body;
 *   BENCH_SERVER=app   the real control plane (createApp), configured from the environment;
 *                      BENCH_LADDER=1 adds the cordon's work in steps (bench/ladder.ts).
 *   BENCH_SERVER=bare-express|nest-fastify|nest-express  the framework floor (bench/framework.ts).
 *   BENCH_SERVER=lean-fastify  the cordon's work on bare Fastify, without the app (bench/lean.ts).
 * It sends {type:'ready', url} once listening, then answers {id, cmd, args} requests.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import Fastify from 'fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../apps/control-plane/src/app.factory';
import { loadConfig } from '../apps/control-plane/src/config/config';
import { InventoryService } from '../apps/control-plane/src/nodes/reporting/inventory.service';
import { writeAtEndOfTurn } from '../apps/control-plane/src/platform/http/end-of-turn';
import { EVENT_STORE } from '../apps/control-plane/src/platform/runtime/tokens';
import { SubscriptionRunner } from '@fleet/cqrs';
import type { EventStore } from '@fleet/eventstore/port';
import { CommandContext, uuidV7 } from '@fleet/kernel';
import { clusterIdOf, nodeReport } from './fleet';
import { FrameworkKind, startFramework } from './framework';
import { addCordonLadder } from './ladder';
import { startLean } from './lean';

export type ServerRequest = { id: number; cmd: string; args?: Record<string, number> };
export type ServerReply = { id: number; ok: boolean; value?: unknown; error?: string };

const send = (message: unknown): void => {
  process.send?.(message);
};

const usage = (): { rss: number; heapUsed: number } => {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
};

const startBare = async (): Promise<{ url: string; handle: Handler }> => {
  const fastify = Fastify({ logger: false, bodyLimit: 1_048_576 });
  // The same work the app's routes start with: parse the JSON body, answer a small JSON body.
  fastify.post('/echo', async (request) => ({
    ok: true,
    size: Object.keys(request.body as object).length,
  }));
  fastify.post('/v1/inventory/reports', async (request) => {
    const body = request.body as { nodes: unknown[] };
    return { nodes: body.nodes.length };
  });
  // BENCH_END_OF_TURN=1: responses written at the end of the loop's turn, as the app writes them.
  if (process.env.BENCH_END_OF_TURN === '1') {
    writeAtEndOfTurn(fastify.server, (error) => {
      throw error;
    });
  }
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  return { url, handle: async (cmd) => common(cmd) };
};

type Handler = (cmd: string, args: Record<string, number>) => Promise<unknown>;

/**
 * A CPU profile of one window of a run (BENCH_PROFILE_DIR set): 'profile-start' and
 * 'profile-stop' around a measured load run, so boot and registration stay out of it.
 */
let profiler: Session | null = null;
let profiles = 0;
const profileWindow = async (cmd: 'profile-start' | 'profile-stop'): Promise<string | null> => {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return null;
  if (cmd === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
    return null;
  }
  if (!profiler) return null;
  const { profile } = await profiler.post('Profiler.stop');
  profiler.disconnect();
  profiler = null;
  const file = path.join(
    dir,
    `${process.env.BENCH_SERVER}-${process.pid}-${++profiles}.cpuprofile`,
  );
  writeFileSync(file, JSON.stringify(profile));
  return file;
};

const common = (cmd: string): Promise<unknown> | undefined =>
  cmd === 'usage'
    ? Promise.resolve(usage())
    : cmd === 'profile-start' || cmd === 'profile-stop'
      ? profileWindow(cmd)
      : undefined;

const adminContext = (): CommandContext => {
  const commandId = uuidV7();
  return {
    commandId,
    correlationId: commandId,
    causationId: commandId,
    actor: { sub: 'bench', roles: ['admin'] },
    now: new Date(),
  };
};

const startApp = async (): Promise<{ url: string; handle: Handler }> => {
  const config = loadConfig(process.env);
  // BENCH_NEST_ONLY=1: the hot routes through Nest as every other route, to show the lean path's
  // gain; BENCH_EACH_SEND=1: each response written as soon as it is ready (http/end-of-turn.ts).
  const { app } = await createApp(config, {
    leanRoutes: process.env.BENCH_NEST_ONLY !== '1',
    endOfTurnSends: process.env.BENCH_EACH_SEND !== '1',
  });
  if (process.env.BENCH_LADDER === '1') {
    // The cordon's work in steps beside the real route (bench/ladder.ts, bench:ab's ladder).
    await app.init();
    addCordonLadder(app);
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const handle = appHandler(app);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  return { url: `http://127.0.0.1:${port}`, handle };
};

const appHandler =
  (app: NestFastifyApplication): Handler =>
  async (cmd, args) => {
    const answered = common(cmd);
    if (answered) return answered;
    switch (cmd) {
      case 'head':
        return app.get<EventStore>(EVENT_STORE).headPosition();
      case 'settle':
        // Every projection and reactor has handled the whole log: the box is quiet again.
        await app.get(SubscriptionRunner).caughtUp();
        return true;
      case 'register': {
        // Registration is not a measured figure: straight to the service, 1000 nodes a call.
        const inventory = app.get(InventoryService);
        const { clusters, perCluster } = args;
        for (let c = 0; c < clusters; c++) {
          for (let n = 0; n < perCluster; n += 1000) {
            const count = Math.min(1000, perCluster - n);
            const reports = Array.from({ length: count }, (_, i) => nodeReport(c, n + i));
            await inventory.report(clusterIdOf(c), reports, adminContext());
          }
        }
        return clusters * perCluster;
      }
      default:
        throw new Error(`unknown command ${cmd}`);
    }
  };

const main = async (): Promise<void> => {
  const kind = process.env.BENCH_SERVER;
  const { url, handle } =
    kind === 'bare'
      ? await startBare()
      : kind === 'app'
        ? await startApp()
        : kind === 'lean-fastify'
          ? { ...(await startLean()), handle: async (cmd: string) => common(cmd) }
          : {
              ...(await startFramework(kind as FrameworkKind)),
              handle: async (cmd: string) => common(cmd),
            };
  process.on('message', (message: ServerRequest) => {
    handle(message.cmd, message.args ?? {}).then(
      (value) => send({ id: message.id, ok: true, value } satisfies ServerReply),
      (error: unknown) =>
        send({ id: message.id, ok: false, error: String(error) } satisfies ServerReply),
    );
  });
  // The parent going away ends this process too: a benchmark never leaves a server behind.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url, pid: process.pid });
};

main().catch((error: unknown) => {
  process.stderr.write(
    `bench server failed: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
