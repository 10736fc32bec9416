import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * The server the PostgreSQL specs use: the CI machine's (127.0.0.1:5432, user postgres, trust
 * auth; .ci/run starts it). POSTGRES_TEST_URL names another one; it must allow CREATE DATABASE.
 */
export const POSTGRES_ADMIN_URL =
  process.env.POSTGRES_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type TestDatabase = {
  /** The URL of a fresh, empty database of its own. */
  readonly url: string;
  readonly name: string;
  /** Drops it, closing whatever connections are still open to it. */
  drop(): Promise<void>;
};

const admin = async (): Promise<Client> => {
  const client = new Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 5000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    // Loud on purpose: these specs are part of CI, which starts PostgreSQL (.ci/run).
    throw new Error(
      `PostgreSQL is not reachable at ${new URL(POSTGRES_ADMIN_URL).host} ` +
        `(${(error as Error).message}): start it (.ci/run does) or set POSTGRES_TEST_URL`,
    );
  }
  return client;
};

/** Runs `sql` as the admin user on the server's `postgres` database. */
export const adminQuery = async (sql: string): Promise<void> => {
  const client = await admin();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
};

/** A database with a random name, created now; `drop()` removes it. */
export const createTestDatabase = async (prefix = 'es_test'): Promise<TestDatabase> => {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
};
