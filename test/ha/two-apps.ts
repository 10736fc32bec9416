import { randomUUID } from 'node:crypto';
import {
  TestDatabase,
  createTestDatabase,
} from '../../libs/eventstore/test/support/postgres-database';
import { TestApp, startApp } from '../support/app';
import { recordMade } from '../support/test-run';

/**
 * Two replicas of the app in this process, on one PostgreSQL log of their own and one Redis
 * prefix of their own, as replicas of a deployment share them; each its own DATA_DIR.
 */
export const twoAppsOnPostgres = async (
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ apps: [TestApp, TestApp]; db: TestDatabase; close: () => Promise<void> }> => {
  const db = await createTestDatabase(prefix);
  const redisPrefix = `fleet-e2e-${randomUUID().slice(0, 8)}`;
  recordMade('redis', redisPrefix);
  const shared = { EVENTSTORE_URL: db.url, REDIS_PREFIX: redisPrefix, ...env };
  const first = await startApp(shared);
  const second = await startApp(shared);
  return {
    apps: [first, second],
    db,
    close: async () => {
      await Promise.allSettled([first.close(), second.close()]);
      await db.drop();
    },
  };
};
