/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package/file.
 *   node dist/bench/profile.js /tmp/prof/CPU.*.cpuprofile [top]
 * Servers are profiled with BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
 */
import { readFileSync } from 'node:fs';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const where = (url: string): string => {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 6) : url || '(native)';
};

const summarise = (file: string, top: number): void => {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
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
      seen.add(`${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`);
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  show('self time by package / file', files);
  show('self time by function', fns);
  show('inclusive time by function (JS frames)', inclusive);
};

const [file, top] = process.argv.slice(2);
if (!file) throw new Error('usage: profile.js FILE.cpuprofile [top]');
summarise(file, Number(top ?? 25));
