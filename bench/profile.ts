/**
 * Summarises V8 .cpuprofile files (node --cpu-prof, or BENCH_PROFILE_DIR).
 *   node dist/bench/profile.js FILE.cpuprofile [top]
 *     one profile: self time by package / file and by function, and inclusive time, in %.
 *   node dist/bench/profile.js A.cpuprofile=US B.cpuprofile=US ... [top]
 *     several servers under one load (the nodes suite with BENCH_PROFILE_DIR profiles the app,
 *     the lean floor and bare Fastify): each function's self time in µs per request, side by
 *     side, sorted by how much more the first spends than the second. US is that server's CPU
 *     per request in the same run (the suite prints it); each profile's busy samples (idle and
 *     the profiler's own work left out) are spread over it in proportion.
 *   node dist/bench/profile.js --lines FILE.cpuprofile=US [top]
 *     the app's own hottest source lines (dist/apps, dist/libs; V8's per-line ticks), in µs per
 *     request as above, each with its text.
 * Servers are profiled with BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sourceOf } from './lib';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  positionTicks?: Array<{ line: number; ticks: number }>;
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/** A package's name for its files, the path under dist/ for ours. */
const where = (url: string): string => {
  const source = sourceOf(url);
  if (!url.includes('node_modules/')) return source;
  const rest = source.split('/');
  return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
};

const nameOf = (f: ProfileNode['callFrame']): string =>
  `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;

/** Each node's self time in µs, summed over its samples. */
const selfTimes = (p: Profile): Map<number, number> => {
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  return self;
};

const summarise = (file: string, top: number): void => {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = selfTimes(p);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const name = nameOf(f);
    fns.set(name, (fns.get(name) ?? 0) + us);
    files.set(where(f.url), (files.get(where(f.url)) ?? 0) + us);
  }
  const show = (title: string, m: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`);
  };
  // Inclusive time: each sample counts once for every distinct function on its stack.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!f.url) continue;
      seen.add(nameOf(f));
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  show('self time by package / file', files);
  show('self time by function', fns);
  show('inclusive time by function (JS frames)', inclusive);
};

/** Samples that are not the server's work: waiting, and the inspector serving the profiler. */
const notWork = (f: ProfileNode['callFrame']): boolean =>
  f.functionName === '(idle)' ||
  (f.url === '' && f.functionName === 'dispatch') ||
  f.url.includes('inspector');

/**
 * Self time per function in µs per request: the profile's busy samples spread over the
 * server's measured CPU per request. Line numbers are left out, so the same function of two
 * builds (or a node internal in two servers) lines up.
 */
const perRequest = (file: string, cpuUs: number): Map<string, number> => {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const fns = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfTimes(p)) {
    const f = byId.get(id)!.callFrame;
    if (notWork(f)) continue;
    busy += us;
    const name = `${f.functionName || '(anonymous)'} ${where(f.url)}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
  }
  if (busy === 0) throw new Error(`${file}: no busy samples`);
  for (const [k, us] of fns) fns.set(k, (us / busy) * cpuUs);
  return fns;
};

const compare = (pairs: ReadonlyArray<[string, number]>, top: number): void => {
  const tables = pairs.map(([file, us]) => perRequest(file, us));
  const names = new Set(tables.flatMap((t) => [...t.keys()]));
  const at = (t: Map<string, number>, k: string) => t.get(k) ?? 0;
  const rows = [...names].sort(
    (a, b) =>
      at(tables[0], b) - at(tables[1], b) - (at(tables[0], a) - at(tables[1], a)) ||
      (a < b ? -1 : 1),
  );
  const label = (file: string) => file.slice(file.lastIndexOf('/') + 1).slice(0, 14);
  console.log(
    `${'µs per request, self'.padEnd(72)}${pairs.map(([f]) => label(f).padStart(16)).join('')}`,
  );
  for (const k of rows.slice(0, top)) {
    const cells = tables.map((t) => at(t, k).toFixed(2).padStart(16)).join('');
    console.log(`${k.slice(0, 72).padEnd(72)}${cells}`);
  }
  const totals = pairs.map(([, us]) => us.toFixed(2).padStart(16)).join('');
  console.log(`${'total (the CPU per request given)'.padEnd(72)}${totals}`);
};

/** The app's own lines (compiled, under dist/apps and dist/libs) by their ticks, in µs per request. */
const hotLines = (file: string, cpuUs: number, top: number): void => {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  let busy = 0;
  for (const [id, us] of selfTimes(p)) if (!notWork(byId.get(id)!.callFrame)) busy += us;
  const sampled = p.timeDeltas.reduce((a, b) => a + b, 0);
  // A tick is one sample: the profile's mean interval, spread over the CPU per request.
  const usPerTick = ((sampled / p.samples.length) * cpuUs) / busy;
  const ticks = new Map<string, { url: string; line: number; fn: string; ticks: number }>();
  for (const n of p.nodes) {
    const { url, functionName } = n.callFrame;
    if (!/\/dist\/(apps|libs)\//.test(url)) continue;
    for (const t of n.positionTicks ?? []) {
      const key = `${url}:${t.line}`;
      const entry = ticks.get(key) ?? { url, line: t.line, fn: functionName, ticks: 0 };
      entry.ticks += t.ticks;
      ticks.set(key, entry);
    }
  }
  const sources = new Map<string, string[]>();
  const text = (url: string, line: number): string => {
    if (!sources.has(url)) {
      let lines: string[] = [];
      try {
        lines = readFileSync(url.startsWith('file:') ? fileURLToPath(url) : url, 'utf8').split(
          '\n',
        );
      } catch {
        // The build profiled is gone: the line numbers stay.
      }
      sources.set(url, lines);
    }
    return (sources.get(url)![line - 1] ?? '').trim().slice(0, 90);
  };
  const all = [...ticks.values()];
  const total = all.reduce((a, e) => a + e.ticks, 0) * usPerTick;
  console.log(`${file}: the app's own code ${total.toFixed(1)} µs of ${cpuUs} µs per request`);
  for (const e of all.sort((a, b) => b.ticks - a.ticks).slice(0, top)) {
    const at = `${where(e.url)}:${e.line} ${e.fn || '(anonymous)'}`;
    console.log(
      `${(e.ticks * usPerTick).toFixed(2).padStart(7)}  ${at.slice(0, 72).padEnd(72)} ${text(e.url, e.line)}`,
    );
  }
};

const args = process.argv.slice(2);
const lines = args.includes('--lines');
const pairs = args.filter((a) => a.includes('='));
const rest = args.filter((a) => !a.includes('=') && a !== '--lines');
const parsePair = (a: string): [string, number] => {
  const eq = a.lastIndexOf('=');
  const us = Number(a.slice(eq + 1));
  if (!(us > 0)) throw new Error(`${a}: the CPU per request after = must be a positive number`);
  return [a.slice(0, eq), us];
};
if (lines) {
  if (pairs.length !== 1) throw new Error('usage: profile.js --lines FILE.cpuprofile=US [top]');
  hotLines(...parsePair(pairs[0]), Number(rest[0] ?? 40));
} else if (pairs.length >= 2) {
  compare(pairs.map(parsePair), Number(rest[0] ?? 60));
} else if (pairs.length === 0 && rest[0]) {
  summarise(rest[0], Number(rest[1] ?? 25));
} else {
  throw new Error(
    'usage: profile.js FILE.cpuprofile [top] | A.cpuprofile=US B.cpuprofile=US ... [top]',
  );
}
