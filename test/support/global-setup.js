// Jest global setup: a file for this run's record of what its apps made (test-run.ts).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

module.exports = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-test-run-'));
  const file = path.join(dir, 'made');
  fs.writeFileSync(file, '');
  // Inherited by the test files (in band, or by workers started after this).
  process.env.FLEET_TEST_RUN = file;
};
