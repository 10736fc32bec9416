import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * HEAP_GROWTH_PERCENT reaches V8: the same churn over the same live set peaks lower with the
 * growth bounded than with V8's own factor (run in child processes: the flag is process-wide).
 * The live set is large enough (~140 MiB) for V8's own factor to show: with 600,000 objects
 * the two peaks were 145-237 and 123-149 MiB, too close to tell apart every time; with
 * 3,000,000, ~740 and 140-410 MiB.
 */
const peakRssMiB = (percent: number): number => {
  const script = `
    require(${JSON.stringify(path.join(__dirname, '../app.factory'))}).applyHeapGrowth(${percent});
    const live = [];
    for (let i = 0; i < 3e6; i++) live.push({ a: i, b: 'x' + i });
    let peak = 0;
    for (let r = 0; r < 30; r++) {
      let churn = [];
      for (let i = 0; i < 2e5; i++) churn.push({ a: i, b: 'y' + i });
      churn = null;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    process.stdout.write(String(Math.round(peak / 2 ** 20) + live.length * 0));
  `;
  const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test' },
  });
  return Number(out);
};

describe('HEAP_GROWTH_PERCENT', () => {
  it('keeps the peak well below what V8 grows to on its own', () => {
    const own = peakRssMiB(0);
    const bounded = peakRssMiB(30);
    expect(bounded).toBeLessThan(own * 0.8);
  });
});
