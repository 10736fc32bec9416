/**
 * `npm run bench`: every suite in order (or `--only <suite>`), each figure printed beside its
 * ceiling with the ratio, the target and whether it is met; the machine and load average; the
 * result merged into bench/results/latest.json per suite (committed, so docs can cite it).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { eventStoreBench } from './eventstore.bench';
import { httpBench } from './http.bench';
import { livenessBench } from './liveness.bench';
import { drainBench } from './drain.bench';
import { BenchSuite, Figure, machine } from './lib';
import { nodesBench } from './nodes.bench';
import { productionBench } from './production.bench';
import { sessionsBench } from './sessions.bench';

const SUITES: readonly BenchSuite[] = [
  eventStoreBench,
  httpBench,
  nodesBench,
  livenessBench,
  sessionsBench,
  drainBench,
  productionBench,
];

type SuiteResult = {
  suite: string;
  /** When this suite ran: latest.json keeps each suite's last run, so suites may differ. */
  date?: string;
  machine?: string;
  seconds: number;
  loadAverage: { before: number[]; after: number[] };
  figures: Figure[];
  error?: string;
};

const fmt = (n: number): string =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : String(n);

const line = (f: Figure): string => {
  const ceiling = f.ceiling
    ? ` | ceiling ${fmt(f.ceiling.value)} (${f.ceiling.name}) | ratio ${(f.value / f.ceiling.value).toFixed(2)}`
    : '';
  const verdict = f.met === undefined ? '' : f.met ? ' | met' : ' | NOT MET';
  return `  ${f.name}: ${fmt(f.value)} ${f.unit}${ceiling}${f.target ? ` | target ${f.target}` : ''}${verdict}`;
};

const parseOnly = (argv: readonly string[]): string | undefined => {
  const i = argv.indexOf('--only');
  if (i < 0) return undefined;
  const name = argv[i + 1];
  if (!name || !SUITES.some((s) => s.name === name)) {
    throw new Error(`--only needs one of: ${SUITES.map((s) => s.name).join(', ')}`);
  }
  return name;
};

const load = (): number[] => os.loadavg().map((x) => Math.round(x * 100) / 100);

const main = async (): Promise<void> => {
  const only = parseOnly(process.argv.slice(2));
  const suites = SUITES.filter((s) => !only || s.name === only);
  const started = new Date();
  const t0 = performance.now();
  console.log(`machine: ${machine()}`);
  console.log(`date: ${started.toISOString()}  load average: ${load().join(' ')}`);
  const results: SuiteResult[] = [];
  for (const suite of suites) {
    console.log(`\n[${suite.name}]`);
    const s0 = performance.now();
    const before = load();
    try {
      const figures = await suite.run();
      for (const f of figures) console.log(line(f));
      results.push({
        suite: suite.name,
        date: new Date().toISOString(),
        machine: machine(),
        seconds: Math.round((performance.now() - s0) / 1000),
        loadAverage: { before, after: load() },
        figures,
      });
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.error(`  suite ${suite.name} failed: ${message}`);
      results.push({
        suite: suite.name,
        date: new Date().toISOString(),
        machine: machine(),
        seconds: Math.round((performance.now() - s0) / 1000),
        loadAverage: { before, after: load() },
        figures: [],
        error: message,
      });
      process.exitCode = 1;
    }
    console.log(`  (${results[results.length - 1].seconds} s)`);
  }
  const seconds = Math.round((performance.now() - t0) / 1000);
  const figures = results.flatMap((r) => r.figures);
  const missed = figures.filter((f) => f.met === false).map((f) => f.name);
  console.log(
    `\n${seconds} s; ${figures.filter((f) => f.met).length} targets met, ${missed.length} not met${missed.length ? `: ${missed.join(', ')}` : ''}`,
  );
  // Compiled to dist/bench/run.js: results go to the source tree's bench/results. The suites
  // run now replace their own entries in latest.json; every other suite's last result is kept.
  const dir = path.resolve(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  const before = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as {
        machine?: string;
        date?: string;
        suites?: SuiteResult[];
      })
    : {};
  // Entries written before suites carried their own date inherit the file's.
  const previous = (before.suites ?? []).map((r) => ({
    ...r,
    date: r.date ?? before.date,
    machine: r.machine ?? before.machine,
  }));
  const ran = new Set(results.map((r) => r.suite));
  const merged = SUITES.map(
    (s) => results.find((r) => r.suite === s.name) ?? previous.find((r) => r.suite === s.name),
  ).filter((r): r is SuiteResult => r !== undefined);
  merged.push(
    ...previous.filter((r) => !ran.has(r.suite) && !SUITES.some((s) => s.name === r.suite)),
  );
  writeFileSync(
    file,
    `${JSON.stringify({ machine: machine(), date: started.toISOString(), seconds, only: only ?? null, suites: merged }, null, 2)}\n`,
  );
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
};

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
