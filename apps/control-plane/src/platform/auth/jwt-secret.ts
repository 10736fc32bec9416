import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_JWT_SECRET_LENGTH } from '../../config/jwt-secret-rule';

export const JWT_SECRET_FILE = 'jwt-secret';

export type ResolvedJwtSecret = { secret: string; generated: boolean; file?: string };

/**
 * The configured AUTH_JWT_SECRET wins; otherwise a per-install secret is kept in the data
 * directory, so the app never starts open to anonymous callers and tokens survive restarts.
 */
export function resolveJwtSecret(opts: {
  configured?: string;
  dataDir: string;
}): ResolvedJwtSecret {
  if (opts.configured !== undefined && opts.configured !== '') {
    if (opts.configured.length < MIN_JWT_SECRET_LENGTH) {
      throw new Error(`AUTH_JWT_SECRET must be at least ${MIN_JWT_SECRET_LENGTH} characters long`);
    }
    return { secret: opts.configured, generated: false };
  }

  const file = join(opts.dataDir, JWT_SECRET_FILE);
  const existing = readSecretFile(file);
  if (existing !== undefined) return { secret: existing, generated: false, file };

  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(48).toString('base64url');
  try {
    // `wx` refuses to overwrite: if another process created it first, use that one.
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = readSecretFile(file);
    if (raced === undefined) throw new Error(`${file} exists but holds no usable secret`);
    return { secret: raced, generated: false, file };
  }
  // The umask may have narrowed the mode further but never widened it; make it exact anyway.
  chmodSync(file, 0o600);
  return { secret, generated: true, file };
}

function readSecretFile(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const secret = text.trim();
  if (secret.length < MIN_JWT_SECRET_LENGTH) {
    throw new Error(
      `${file} holds a secret shorter than ${MIN_JWT_SECRET_LENGTH} characters; delete it or set AUTH_JWT_SECRET`,
    );
  }
  return secret;
}
