import { execFileSync } from 'node:child_process';
import { APP_NODE_FLAGS } from './node-flags';

/**
 * APP_NODE_FLAGS reach V8 from node's command line: under the same churn the young
 * generation grows past the largest it reaches at V8's default (run in child processes).
 */
const largestNewSpaceMiB = (flags: readonly string[]): number => {
  const script = `
    const v8 = require('node:v8');
    const kept = [];
    let largest = 0;
    for (let r = 0; r < 200; r++) {
      const batch = [];
      for (let i = 0; i < 2e4; i++) batch.push({ i, s: 'x' + i });
      kept.push(batch);
      if (kept.length > 20) kept.shift();
      const ns = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      largest = Math.max(largest, ns.space_size);
    }
    process.stdout.write(String(largest / 2 ** 20));
  `;
  return Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }));
};

describe('APP_NODE_FLAGS', () => {
  it("give the young generation more room than V8's default", () => {
    const own = largestNewSpaceMiB([]);
    const flagged = largestNewSpaceMiB(APP_NODE_FLAGS);
    expect(flagged).toBeGreaterThanOrEqual(own * 2);
  });
});
