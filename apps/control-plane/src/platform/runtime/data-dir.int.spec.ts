import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDataDirWarning } from './data-dir';

describe('a DATA_DIR other users can read', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'data-dir-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is told, naming the directory, its mode and the fix', () => {
    chmodSync(root, 0o755);
    expect(openDataDirWarning(root)).toBe(
      `DATA_DIR ${root} can be read by other users (mode 0755); ` +
        'it holds the event log and the JWT secret: chmod 700 it',
    );
    chmodSync(root, 0o770);
    expect(openDataDirWarning(root)).toContain('(mode 0770)');
  });

  it('is not told when the directory is its owner only, or not there yet', () => {
    chmodSync(root, 0o700);
    expect(openDataDirWarning(root)).toBeNull();
    expect(openDataDirWarning(join(root, 'missing'))).toBeNull();
  });
});
