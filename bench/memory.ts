/**
 * Where the memory goes at fleet scale, in process: boots the real app (embedded stores, as
 * the nodes bench does), registers 100 clusters x 1000 GPU nodes (8 L40S cards, 2 labels)
 * through InventoryService, 1000 nodes a call, settles every projection and reactor, then
 * prints the live heap after gc(), RSS and VmHWM at each stage, and a breakdown measured by
 * dropping one holder at a time (aggregate cache, each read-model collection, heartbeats).
 *
 *   tsc -p tsconfig.bench.json && node --expose-gc dist/bench/memory.js \
 *     [--clusters 100] [--per-cluster 1000] [--cycles 0] [--no-breakdown] [--json]
 *     [--snapshot file.heapsnapshot] [--snapshot-left file.heapsnapshot]
 *
 * --cycles N re-reports every node N times afterwards (unchanged, 100 nodes a call, straight
 * to the service) to see what steady no-change traffic does to RSS. Extra node flags (e.g.
 * --max-old-space-size) go on the node command line; the figures then include them.
 */
import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../apps/control-plane/src/app.factory';
import { loadConfig } from '../apps/control-plane/src/config/config';
import { InventoryService } from '../apps/control-plane/src/nodes/reporting/inventory.service';
import { HEARTBEATS } from '../apps/control-plane/src/nodes/heartbeat/heartbeat.module';
import { READ_MODELS } from '../apps/control-plane/src/platform/runtime/tokens';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, uuidV7 } from '@fleet/kernel';
import { clusterIdOf, nodeReport } from './fleet';

const MIB = 2 ** 20;
const mib = (b: number): number => Math.round(b / MIB);

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const flag = (name: string): boolean => process.argv.includes(`--${name}`);

const gc = (): void => {
  const run = (globalThis as { gc?: () => void }).gc;
  if (!run) throw new Error('run node with --expose-gc');
  run();
  run();
};

const status = (): { rss: number; hwm: number } => {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kib = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(s);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
};

type Stage = {
  stage: string;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  rssMiB: number;
  peakRssMiB: number;
  seconds?: number;
};

const stages: Stage[] = [];
const record = (stage: string, collect: boolean, seconds?: number): Stage => {
  if (collect) gc();
  const m = process.memoryUsage();
  const s = status();
  const row: Stage = {
    stage,
    heapUsedMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    externalMiB: mib(m.external + m.arrayBuffers),
    rssMiB: mib(s.rss),
    peakRssMiB: mib(s.hwm),
    ...(seconds === undefined ? {} : { seconds: Math.round(seconds * 10) / 10 }),
  };
  stages.push(row);
  if (!flag('json')) {
    process.stdout.write(
      `${stage.padEnd(44)} heap ${String(row.heapUsedMiB).padStart(5)} MiB` +
        ` (total ${row.heapTotalMiB}, external ${row.externalMiB})` +
        `  RSS ${String(row.rssMiB).padStart(5)} MiB  peak ${row.peakRssMiB} MiB` +
        `${seconds === undefined ? '' : `  ${row.seconds} s`}\n`,
    );
  }
  return row;
};

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

/** Private state read by name: this script measures, it never changes behaviour. */
const field = <T>(owner: object, name: string): T => (owner as Record<string, T>)[name];

const breakdown = async (app: NestFastifyApplication, nodes: number): Promise<void> => {
  const rows: Array<{ part: string; MiB: number; bytesPerNode: number }> = [];
  let before = process.memoryUsage().heapUsed;
  const drop = (part: string, clear: () => void): void => {
    clear();
    gc();
    const now = process.memoryUsage().heapUsed;
    rows.push({
      part,
      MiB: Math.round(((before - now) / MIB) * 10) / 10,
      bytesPerNode: Math.round((before - now) / nodes),
    });
    before = now;
  };
  const pipeline = app.get(CommandPipeline);
  const cache = field<{ entries: Map<string, unknown> }>(pipeline, 'cache');
  drop(`aggregate cache (${cache.entries.size} entries)`, () => cache.entries.clear());
  const store = app.get(READ_MODELS) as object;
  const collections = field<Map<string, Map<string, unknown>> | undefined>(store, 'collections');
  const indexes = field<Map<string, Map<string, Map<string, Set<string>>>> | undefined>(
    store,
    'indexes',
  );
  if (indexes) {
    for (const [name, byField] of indexes) {
      drop(`read-model indexes of ${name} (${[...byField.keys()].join(', ')})`, () => {
        for (const index of byField.values()) index.clear();
      });
    }
  }
  if (collections) {
    const bySize = [...collections].sort((a, b) => b[1].size - a[1].size);
    for (const [name, docs] of bySize) {
      if (docs.size === 0) continue;
      drop(`read models: ${name} (${docs.size} docs)`, () => docs.clear());
    }
  }
  const heartbeats = app.get(HEARTBEATS) as object;
  const beats = field<Map<string, unknown> | undefined>(heartbeats, 'beats');
  if (beats) drop(`heartbeats (${beats.size})`, () => beats.clear());
  rows.push({ part: 'left (app, code, everything else)', MiB: mib(before), bytesPerNode: 0 });
  const left = process.argv.indexOf('--snapshot-left');
  if (left > 0) v8.writeHeapSnapshot(process.argv[left + 1]);
  if (flag('json')) process.stdout.write(`${JSON.stringify({ stages, breakdown: rows })}\n`);
  else {
    process.stdout.write('\nlive heap by holder (dropped one at a time, gc() after each):\n');
    for (const r of rows) {
      process.stdout.write(
        `  ${r.part.padEnd(60)} ${String(r.MiB).padStart(7)} MiB` +
          `${r.bytesPerNode ? `  ${r.bytesPerNode} B/node` : ''}\n`,
      );
    }
  }
};

const main = async (): Promise<void> => {
  const clusters = arg('clusters', 100);
  const perCluster = arg('per-cluster', 1000);
  const cycles = arg('cycles', 0);
  const nodes = clusters * perCluster;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-bench-memory-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    AUTH_JWT_SECRET: 'bench-memory-secret-0123456789abcdef0123456789',
    LOG_LEVEL: 'silent',
    NODE_STALE_SEC: '3600',
  });
  const { app } = await createApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    record('booted', true);
    const inventory = app.get(InventoryService);
    const runner = app.get(SubscriptionRunner);
    let t0 = performance.now();
    for (let c = 0; c < clusters; c++) {
      for (let n = 0; n < perCluster; n += 1000) {
        const count = Math.min(1000, perCluster - n);
        const reports = Array.from({ length: count }, (_, i) => nodeReport(c, n + i));
        await inventory.report(clusterIdOf(c), reports, adminContext());
      }
    }
    record(`registered ${nodes} nodes (no gc)`, false, (performance.now() - t0) / 1000);
    t0 = performance.now();
    await runner.caughtUp();
    record('projections settled (no gc)', false, (performance.now() - t0) / 1000);
    record('settled, after gc()', true);
    if (cycles > 0) {
      t0 = performance.now();
      const cpu0 = process.cpuUsage();
      for (let round = 0; round < cycles; round++) {
        for (let c = 0; c < clusters; c++) {
          for (let n = 0; n < perCluster; n += 100) {
            const count = Math.min(100, perCluster - n);
            const reports = Array.from({ length: count }, (_, i) => nodeReport(c, n + i));
            await inventory.report(clusterIdOf(c), reports, adminContext());
          }
        }
      }
      const cpu = process.cpuUsage(cpu0);
      record(
        `${cycles} no-change cycle(s), ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU`,
        false,
        (performance.now() - t0) / 1000,
      );
      record(`${cycles} no-change cycle(s), after gc()`, true);
    }
    const heap = v8.getHeapSpaceStatistics();
    if (!flag('json')) {
      process.stdout.write('\nV8 spaces (used / size MiB): ');
      process.stdout.write(
        heap
          .filter((s) => s.space_size > MIB)
          .map((s) => `${s.space_name} ${mib(s.space_used_size)}/${mib(s.space_size)}`)
          .join(', ') + '\n',
      );
    }
    const snapshot = process.argv.indexOf('--snapshot');
    if (snapshot > 0) {
      const file = v8.writeHeapSnapshot(process.argv[snapshot + 1]);
      process.stdout.write(`heap snapshot: ${file}\n`);
    }
    if (!flag('no-breakdown')) await breakdown(app, nodes);
    else if (flag('json')) process.stdout.write(`${JSON.stringify({ stages })}\n`);
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
