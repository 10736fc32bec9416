import { CommandPipeline } from '@fleet/cqrs';
import { PostgresEventStore } from '@fleet/eventstore/postgres-event-store';
import { systemContext, uuidFrom } from '@fleet/kernel';
import {
  TestDatabase,
  createTestDatabase,
} from '../../libs/eventstore/test/support/postgres-database';

/** A replica's write path: its own connection pool to the shared log, its own pipeline and cache. */
export type ReplicaWrites = {
  readonly store: PostgresEventStore;
  readonly pipeline: CommandPipeline;
};

/** `n` replicas' write paths on one PostgreSQL log of its own (a fresh database, dropped by `close`). */
export const replicasOnPostgres = async (
  prefix: string,
  n = 2,
): Promise<{ db: TestDatabase; replicas: ReplicaWrites[]; close: () => Promise<void> }> => {
  const db = await createTestDatabase(prefix);
  const replicas = Array.from({ length: n }, () => {
    const store = new PostgresEventStore({ url: db.url, pollMs: 100 });
    return { store, pipeline: new CommandPipeline(store) };
  });
  return {
    db,
    replicas,
    close: async () => {
      await Promise.all(replicas.map((r) => r.store.close()));
      await db.drop();
    },
  };
};

/** A request's context with its own command id. */
export const requestContext = (...key: string[]) =>
  systemContext(uuidFrom('ha-spec', ...key), { now: new Date('2026-12-07T12:00:00Z') });
