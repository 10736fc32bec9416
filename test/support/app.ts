import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../apps/control-plane/src/app.factory';
import { Config, loadConfig } from '../../apps/control-plane/src/config/config';
import { Role } from '../../apps/control-plane/src/platform/auth/caller';
import { TokenService } from '../../apps/control-plane/src/platform/auth/token-service';
import { recordMade } from './test-run';

export const TEST_SECRET = 'test-secret-for-e2e-only-0123456789abcdef';

export type TestApp = {
  readonly app: NestFastifyApplication;
  readonly url: string;
  readonly config: Config;
  token(sub: string, roles: Role[], clusters?: string[]): Promise<string>;
  /** Authorization header for a caller. */
  auth(sub: string, roles: Role[], clusters?: string[]): Promise<Record<string, string>>;
  close(): Promise<void>;
};

/**
 * Starts the real app on a free port over HTTP, on a fresh DATA_DIR (or the one given,
 * to restart on the same data). `REDIS_URL` defaults to the local Redis with a unique prefix.
 */
export const startApp = async (
  env: Record<string, string> = {},
  options: {
    dataDir?: string;
    redis?: boolean;
    leanRoutes?: boolean;
    endOfTurnSends?: boolean;
  } = {},
): Promise<TestApp> => {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-e2e-'));
  const redis =
    options.redis === false
      ? {}
      : {
          REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          REDIS_PREFIX: `fleet-e2e-${randomUUID().slice(0, 8)}`,
        };
  if (!options.dataDir) recordMade('dir', dataDir);
  if (redis.REDIS_PREFIX) recordMade('redis', redis.REDIS_PREFIX);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    AUTH_JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: 'silent',
    ...redis,
    ...env,
  });
  const { app } = await createApp(config, {
    leanRoutes: options.leanRoutes,
    endOfTurnSends: options.endOfTurnSends,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const tokens = new TokenService(TEST_SECRET);
  const token = (sub: string, roles: Role[], clusters: string[] = []) =>
    tokens.sign({ sub, roles, clusters });
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    config,
    token,
    auth: async (sub, roles, clusters) => ({
      authorization: `Bearer ${await token(sub, roles, clusters)}`,
    }),
    close: () => app.close(),
  };
};
