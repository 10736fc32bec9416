import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * disablePretenuring reaches V8: an allocation site whose first objects lived long (as a
 * registration's do) keeps its later short-lived objects out of the old generation. Run in
 * child processes: the flag is process-wide.
 */
const oldSpaceGrowthMiB = (disable: boolean): number => {
  const script = `
    const v8 = require('node:v8');
    if (${disable}) require(${JSON.stringify(path.join(__dirname, '../app.factory'))}).disablePretenuring();
    const make = (i) => ({ a: i, b: [i, i + 1] });
    const keep = [];
    for (let i = 0; i < 3e5; i++) keep.push(make(i));
    const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size;
    const before = old();
    for (let r = 0; r < 40; r++) {
      const churn = [];
      for (let i = 0; i < 1e4; i++) churn.push(make(i));
    }
    process.stdout.write(String((old() - before) / 2 ** 20 + keep.length * 0));
  `;
  const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test' },
  });
  return Number(out);
};

describe('disablePretenuring', () => {
  it('lets short-lived objects of a once long-lived allocation site die young', () => {
    const pretenured = oldSpaceGrowthMiB(false);
    const young = oldSpaceGrowthMiB(true);
    expect(young).toBeLessThan(pretenured * 0.7);
  });
});
