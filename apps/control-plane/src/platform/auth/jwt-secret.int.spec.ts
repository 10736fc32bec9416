import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveJwtSecret } from './jwt-secret';

describe('resolveJwtSecret', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'jwt-secret-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  describe('when AUTH_JWT_SECRET is not configured', () => {
    it('generates a secret on first start, creating the data directory', () => {
      const dataDir = join(root, 'nested', 'data');
      const first = resolveJwtSecret({ dataDir });
      expect(first.generated).toBe(true);
      expect(first.file).toBe(join(dataDir, 'jwt-secret'));
      // 48 random bytes in base64url.
      expect(first.secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
      expect(readFileSync(first.file!, 'utf8').trim()).toBe(first.secret);
      // The data directory (the event log, heartbeats, the secret) is its owner's only.
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    });

    it('writes the file readable by its owner only', () => {
      const { file } = resolveJwtSecret({ dataDir: root });
      expect(statSync(file!).mode & 0o777).toBe(0o600);
    });

    it('reuses the stored secret on later starts', () => {
      const first = resolveJwtSecret({ dataDir: root });
      const second = resolveJwtSecret({ dataDir: root, configured: '' });
      expect(second).toEqual({ secret: first.secret, generated: false, file: first.file });
    });

    it('refuses a stored secret that is too short', () => {
      writeFileSync(join(root, 'jwt-secret'), 'short\n');
      expect(() => resolveJwtSecret({ dataDir: root })).toThrow(/jwt-secret/);
    });
  });

  describe('when AUTH_JWT_SECRET is configured', () => {
    it('uses it and writes nothing', () => {
      const configured = 'c'.repeat(32);
      expect(resolveJwtSecret({ configured, dataDir: root })).toEqual({
        secret: configured,
        generated: false,
      });
      expect(() => statSync(join(root, 'jwt-secret'))).toThrow();
    });

    it('wins over a stored secret', () => {
      const stored = resolveJwtSecret({ dataDir: root });
      const configured = 'd'.repeat(40);
      expect(resolveJwtSecret({ configured, dataDir: root }).secret).toBe(configured);
      expect(stored.secret).not.toBe(configured);
    });

    it('refuses one shorter than 32 characters, naming the setting', () => {
      expect(() => resolveJwtSecret({ configured: 'x'.repeat(31), dataDir: root })).toThrow(
        /AUTH_JWT_SECRET/,
      );
    });
  });
});
