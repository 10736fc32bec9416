import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventStore } from '../src';

describe('createEventStore on the embedded default', () => {
  it('creates a missing data directory readable by its owner only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'event-store-'));
    try {
      const dataDir = join(root, 'nested', 'data');
      const store = createEventStore({ dataDir });
      try {
        expect(statSync(dataDir).mode & 0o777).toBe(0o700);
        expect(statSync(join(root, 'nested')).mode & 0o777).toBe(0o700);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
