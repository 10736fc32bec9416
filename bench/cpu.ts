/**
 * CPU per request, in process: the steadiest figure on a shared box (`process.cpuUsage()`
 * counts this process's CPU only, whatever else the machine is doing). Boots the real app
 * (embedded stores, no Redis), registers a small fleet, then sends each request kind through
 * `fastify.inject` (no sockets: the figures exclude kernel and socket costs, which the bare
 * route pays too) and prints the median µs of CPU per request over several rounds beside a
 * bare Fastify route doing the same through inject. Kinds: a no-op cordon, the same node read
 * (GET, the cordon without its command), single-node and 100-node no-change reports, and a
 * one-card placement (`POST /v1/sessions`, one at a time, so each of its three commands
 * commits alone; with the work it sets off in projections); and the cordon's ladder: its work
 * step by step as plain routes on the app's instance, without Nest (bench/ladder.ts); and the
 * cordon's own work (context, command, Node view) called directly, no HTTP, hot in a loop.
 *
 *   npm run bench:cpu [-- --rounds 11 --requests 1000 --nodes 2000 --only cordon --profile /tmp/p]
 *     [--allocations /tmp/a]  (bytes allocated per request, by function)
 */
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import Fastify from 'fastify';
import { createApp } from '../apps/control-plane/src/app.factory';
import { loadConfig } from '../apps/control-plane/src/config/config';
import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { NodeCommands } from '../apps/control-plane/src/nodes/nodes.commands';
import { NodesQueries } from '../apps/control-plane/src/nodes/nodes.queries';
import {
  commandContextOf,
  PlatformRequest,
} from '../apps/control-plane/src/platform/http/command-context';
import { clusterIdOf, reportBody } from './fleet';
import { addCordonLadder, LADDER_STEPS, ladderPath } from './ladder';
import { median, sourceOf } from './lib';

type Inject = (o: {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  payload?: string;
}) => Promise<{ statusCode: number; body: string }>;

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

const measure = async (
  inject: Inject,
  requests: number,
  make: (i: number) => Parameters<Inject>[0],
  expect: number,
): Promise<number> => {
  const start = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const res = await inject(make(i));
    if (res.statusCode !== expect) throw new Error(`answered ${res.statusCode}: ${res.body}`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / requests;
};

type AllocationNode = {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
};

/** The functions that allocated most over `requests` requests, in bytes per request. */
const printAllocations = (name: string, head: AllocationNode, requests: number): void => {
  const bytes = new Map<string, number>();
  let total = 0;
  const walk = (node: AllocationNode): void => {
    const f = node.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${sourceOf(f.url)}:${f.lineNumber + 1}`;
    bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    node.children.forEach(walk);
  };
  walk(head);
  console.log(`${name}: ${(total / requests).toFixed(0)} bytes allocated per request (sampled)`);
  for (const [key, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`  ${(size / requests).toFixed(0).padStart(7)} B  ${key}`);
  }
};

const main = async (): Promise<void> => {
  const rounds = arg('rounds', 11);
  const requests = arg('requests', 1000);
  const clusters = 10;
  const perCluster = Math.max(100, Math.floor(arg('nodes', 2000) / clusters));
  const secret = 'bench-cpu-secret-0123456789abcdef0123456789';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-bench-cpu-'));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    AUTH_JWT_SECRET: secret,
    LOG_LEVEL: 'silent',
    NODE_STALE_SEC: '3600',
    CORDON_SYNC_SEC: '3600',
  });
  const { app } = await createApp(config);
  await app.init();
  addCordonLadder(app);
  await app.getHttpAdapter().getInstance().ready();
  const appInject = app
    .getHttpAdapter()
    .getInstance()
    .inject.bind(app.getHttpAdapter().getInstance()) as unknown as Inject;
  const bare = Fastify({ logger: false });
  bare.post('/echo', async (request) => ({
    ok: true,
    size: Object.keys(request.body as object).length,
  }));
  await bare.ready();
  const bareInject = bare.inject.bind(bare) as unknown as Inject;

  const tokens = new TokenService(secret);
  const admin = `Bearer ${await tokens.sign({ sub: 'bench-admin', roles: ['admin'] })}`;
  const operator = await Promise.all(
    Array.from(
      { length: clusters },
      async (_, c) =>
        `Bearer ${await tokens.sign({ sub: `op-${c}`, roles: ['operator'], clusters: [clusterIdOf(c)] })}`,
    ),
  );
  const users = await Promise.all(
    Array.from(
      { length: 20 },
      async (_, u) => `Bearer ${await tokens.sign({ sub: `user-${u}`, roles: ['user'] })}`,
    ),
  );
  const json = (authorization: string) => ({ 'content-type': 'application/json', authorization });
  for (let c = 0; c < clusters; c++) {
    for (let from = 0; from < perCluster; from += 100) {
      const res = await appInject({
        method: 'POST',
        url: '/v1/inventory/reports',
        headers: json(operator[c]),
        payload: reportBody(c, from, 100),
      });
      if (res.statusCode !== 200) throw new Error(`register answered ${res.statusCode}`);
    }
  }
  const first = JSON.parse(
    (
      await appInject({
        method: 'POST',
        url: '/v1/inventory/reports',
        headers: json(operator[0]),
        payload: reportBody(0, 0, 1),
      })
    ).body,
  ) as { nodes: Array<{ nodeId: string }> };
  const nodeUrl = `/v1/nodes/${first.nodes[0].nodeId}`;
  const cordonUrl = `${nodeUrl}/cordon`;
  const cordonBody = JSON.stringify({ reason: 'bench' });
  await appInject({ method: 'POST', url: cordonUrl, headers: json(admin), payload: cordonBody });

  const batches: string[][] = Array.from({ length: clusters }, (_, c) =>
    Array.from({ length: perCluster / 100 }, (_, b) => reportBody(c, b * 100, 100)),
  );
  const singles: string[][] = Array.from({ length: clusters }, (_, c) =>
    Array.from({ length: perCluster }, (_, n) => reportBody(c, n, 1)),
  );
  const sessionBody = JSON.stringify({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 });
  // Placements take a card each and keep it: warm-up and rounds must fit the fleet's cards.
  const placements = Math.min(
    Math.max(50, Math.floor(requests / 4)),
    Math.floor((clusters * perCluster * 8) / (rounds + 1)),
  );
  const kinds: Array<[string, Inject, number, (i: number) => Parameters<Inject>[0], number?]> = [
    [
      'bare Fastify POST /echo',
      bareInject,
      requests,
      () => ({ method: 'POST', url: '/echo', headers: json(admin), payload: cordonBody }),
    ],
    [
      'no-op cordon (admin)',
      appInject,
      requests,
      () => ({ method: 'POST', url: cordonUrl, headers: json(admin), payload: cordonBody }),
    ],
    // The steps as bench/ladder.ts names them (bench:ab's ladder prints the same names).
    ...LADDER_STEPS.map((step): (typeof kinds)[number] => [
      `cordon ladder: ${step}`,
      appInject,
      requests,
      () => ({
        method: 'POST',
        url: ladderPath(step, first.nodes[0].nodeId),
        headers: json(admin),
        payload: cordonBody,
      }),
    ]),
    [
      // The cordon's route without its command: token, id, read model, Node view.
      'node read (admin GET)',
      appInject,
      requests,
      () => ({
        method: 'GET',
        url: nodeUrl,
        headers: { authorization: admin },
      }),
    ],
    [
      'single-node no-change report',
      appInject,
      requests,
      (i) => {
        const c = i % clusters;
        const list = singles[c];
        return {
          method: 'POST',
          url: '/v1/inventory/reports',
          headers: json(operator[c]),
          payload: list[Math.floor(i / clusters) % list.length],
        };
      },
    ],
    [
      // One at a time: each of its three commands commits alone (no group commit to share).
      'placement, one card (sequential)',
      appInject,
      placements,
      (i) => ({
        method: 'POST',
        url: '/v1/sessions',
        headers: json(users[i % users.length]),
        payload: sessionBody,
      }),
      201,
    ],
    [
      '100-node no-change report',
      appInject,
      Math.max(50, Math.floor(requests / 10)),
      (i) => {
        const c = i % clusters;
        const list = batches[c];
        return {
          method: 'POST',
          url: '/v1/inventory/reports',
          headers: json(operator[c]),
          payload: list[Math.floor(i / clusters) % list.length],
        };
      },
    ],
  ];
  console.log(
    `nodes ${clusters * perCluster}, ${rounds} rounds, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const only = process.argv.includes('--only')
    ? process.argv[process.argv.indexOf('--only') + 1]
    : '';
  // --profile FILE: a V8 CPU profile of the measured rounds only (not boot or registration).
  const profileTo = process.argv.includes('--profile')
    ? process.argv[process.argv.indexOf('--profile') + 1]
    : undefined;
  // --allocations FILE: V8's sampling heap profiler over the measured rounds, collected objects
  // included (what each request allocates, not what it keeps): FILE.N.heapprofile and the top
  // allocating functions in bytes per request.
  const allocationsTo = process.argv.includes('--allocations')
    ? process.argv[process.argv.indexOf('--allocations') + 1]
    : undefined;
  const inspector = new Session();
  if (profileTo || allocationsTo) inspector.connect();
  if (profileTo) await inspector.post('Profiler.enable');
  if (allocationsTo) await inspector.post('HeapProfiler.enable');
  for (const [name, inject, n, make, expect = 200] of kinds) {
    // The bare route, the ceiling, is measured whatever --only picks.
    if (!name.includes(only) && inject !== bareInject) continue;
    await measure(inject, n, make, expect); // warm-up: a full round
    const samples: number[] = [];
    // Pause time of every GC in the measured rounds (wall ms of the main thread).
    let gcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs += entry.duration;
    });
    gc.observe({ entryTypes: ['gc'] });
    if (profileTo) await inspector.post('Profiler.start');
    if (allocationsTo) {
      await inspector.post('HeapProfiler.startSampling', {
        samplingInterval: 256,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    }
    for (let r = 0; r < rounds; r++) samples.push(await measure(inject, n, make, expect));
    await new Promise((resolve) => setImmediate(resolve));
    gc.disconnect();
    if (profileTo) {
      const { profile } = await inspector.post('Profiler.stop');
      fs.writeFileSync(
        `${profileTo}.${kinds.findIndex((k) => k[0] === name)}.cpuprofile`,
        JSON.stringify(profile),
      );
    }
    if (allocationsTo) {
      const { profile } = await inspector.post('HeapProfiler.stopSampling');
      const file = `${allocationsTo}.${kinds.findIndex((k) => k[0] === name)}.heapprofile`;
      fs.writeFileSync(file, JSON.stringify(profile));
      printAllocations(name, profile.head, n * rounds);
    }
    // Another process can only add to a round's CPU (caches, frequency), never take from it:
    // on a shared box the minimum is the steadiest figure, the median the typical one.
    console.log(
      `${name.padEnd(32)} min ${Math.min(...samples)
        .toFixed(0)
        .padStart(
          5,
        )} µs  median ${median(samples).toFixed(0).padStart(5)} µs CPU/request, GC pauses ${(
        (gcMs * 1000) /
        (n * rounds)
      ).toFixed(0)} µs/request`,
    );
  }
  // The cordon's own work called directly, no HTTP and no framework: what the app's code costs
  // by itself, hot in a loop, beside what the same work costs inside a request above.
  const nodeId = first.nodes[0].nodeId;
  const commands = app.get(NodeCommands);
  const queries = app.get(NodesQueries);
  const caller = { sub: 'bench-admin', roles: ['admin' as const], clusters: [] };
  const contextOf = () =>
    commandContextOf({ id: 'bench', correlationId: 'bench', caller } as unknown as PlatformRequest);
  const direct: Array<[string, () => Promise<unknown>]> = [
    ['cordon, no HTTP: context', async () => contextOf()],
    [
      'cordon, no HTTP: + command',
      async () => {
        const ctx = contextOf();
        await commands.execute(
          nodeId,
          { type: 'CordonNode', data: { reason: 'bench', at: ctx.now.toISOString() } },
          ctx,
        );
      },
    ],
    ['cordon, no HTTP: Node view, JSON', async () => JSON.stringify(await queries.get(nodeId))],
  ];
  for (const [name, call] of direct) {
    if (!name.includes(only)) continue;
    const calls = requests * 10;
    const run = async (): Promise<number> => {
      const start = process.cpuUsage();
      for (let i = 0; i < calls; i++) await call();
      const used = process.cpuUsage(start);
      return (used.user + used.system) / calls;
    };
    await run(); // warm-up
    const samples: number[] = [];
    for (let r = 0; r < rounds; r++) samples.push(await run());
    console.log(
      `${name.padEnd(32)} min ${Math.min(...samples).toFixed(1)} µs  median ${median(samples).toFixed(1)} µs CPU/call`,
    );
  }
  await app.close();
  await bare.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
