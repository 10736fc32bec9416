import fs from 'node:fs';

/** Set by the run's global setup (test/support/global-setup.js): the file listing what the run made. */
export const TEST_RUN_ENV = 'FLEET_TEST_RUN';

/**
 * Records a data directory or a Redis prefix the run made, for the global teardown to remove
 * once every test file has finished (a test may restart an app on the same data, so nothing is
 * removed earlier). Without the global setup (a spec run by other means), nothing is recorded.
 */
export const recordMade = (kind: 'dir' | 'redis', value: string): void => {
  const file = process.env[TEST_RUN_ENV];
  if (file) fs.appendFileSync(file, `${kind} ${value}\n`);
};
