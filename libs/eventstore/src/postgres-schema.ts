import { PoolClient } from 'pg';
import { fencingMigration } from './postgres-fencing';

/**
 * Advisory lock keys (one namespace per database). APPEND_LOCK is held by every transaction that
 * writes events from the moment it reads the stream heads until it commits; MIGRATION_LOCK by the
 * process migrating the schema.
 */
export const APPEND_LOCK = 7_236_854_917_023_001n;
export const MIGRATION_LOCK = 7_236_854_917_023_002n;

/** The channel every commit that adds events notifies (delivered at commit, to this database only). */
export const EVENTS_CHANNEL = 'fleet_events';

export type Migration = { readonly version: number; readonly name: string; readonly sql: string };

/**
 * The schema, one migration per change, applied in order and never edited once released (a change
 * is a new migration). Version 1: the events table, its guards and the batch append function;
 * version 2: the fenced batch append (postgres-fencing.ts).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events',
    sql: `
CREATE TABLE events (
  -- Positions come from the identity only (GENERATED ALWAYS refuses a position given by a writer),
  -- drawn while APPEND_LOCK is held, so they grow in commit order.
  position   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY CHECK (position > 0),
  event_id   TEXT   NOT NULL UNIQUE,
  stream_id  TEXT   NOT NULL,
  revision   BIGINT NOT NULL CHECK (revision >= 0),
  type       TEXT   NOT NULL,
  -- json, not jsonb: the text is stored as written (key order kept), still checked to be JSON.
  data       JSON   NOT NULL,
  metadata   JSON   NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX events_type_position ON events (type, position);

CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only: % is forbidden', TG_OP USING ERRCODE = 'P0001';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH ROW EXECUTE FUNCTION events_refuse_change();
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change();
-- The owner keeps no right to rewrite history either (a superuser still has it, the triggers not).
REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC, CURRENT_USER;

-- Any INSERT, from this app or by hand, waits for APPEND_LOCK before its rows draw positions: no
-- transaction can commit a position below one that another transaction committed already.
CREATE FUNCTION events_take_append_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(${APPEND_LOCK});
  RETURN NULL;
END $$;
CREATE TRIGGER events_append_lock BEFORE INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_take_append_lock();

-- Readers are woken at commit (a transaction's notifications are sent when it commits).
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${EVENTS_CHANNEL}', '');
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify();

-- A group commit: many appends in one transaction, each judged on its own against the heads as
-- the appends before it in the batch left them. Event ids are distinct across the batch (the
-- caller cuts a batch before an append that repeats an earlier one's id).
-- Per append: status 0 appended, 1 replay (a no-op), 2 conflict (revision = the actual one),
-- 3 part of its ids stored already.
CREATE FUNCTION events_append_batch(
  p_streams  TEXT[],   -- per append
  p_expected BIGINT[], -- per append: -1 no stream, -2 any, else the exact revision
  p_prev     INT[],    -- per append: the earlier append of the batch on the same stream, or 0
  p_counts   INT[],    -- per append: how many events
  p_owner    INT[],    -- per event: its append
  p_ids      TEXT[],
  p_types    TEXT[],
  p_data     TEXT[],
  p_metadata TEXT[]
) RETURNS TABLE (out_status SMALLINT, out_revision BIGINT, out_position BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  n INT := coalesce(array_length(p_streams, 1), 0);
  head_rev BIGINT[];
  head_pos BIGINT[];
  here INT[];
  anywhere INT[];
  st SMALLINT[] := array_fill(0::SMALLINT, ARRAY[n]);
  rev BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  pos BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  -- The stream's head after each append: its revision, and its position, or the append of this
  -- batch that wrote it (its position is known once the rows are in).
  after_rev BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  after_pos BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  after_of INT[] := array_fill(0, ARRAY[n]);
  -- Per append that writes: the revision before it and how many events of the batch precede it.
  accepted BOOLEAN[] := array_fill(false, ARRAY[n]);
  base BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  first_event INT[] := array_fill(0, ARRAY[n]);
  accepted_rev BIGINT[] := array_fill(NULL::BIGINT, ARRAY[n]);
  last_pos BIGINT[];
  cur_rev BIGINT;
  cur_pos BIGINT;
  cur_of INT;
  expected BIGINT;
  offs INT := 0;
  any_accepted BOOLEAN := false;
BEGIN
  -- Taken before the heads are read, so every check below sees the latest commit.
  PERFORM pg_advisory_xact_lock(${APPEND_LOCK});

  SELECT array_agg(h.revision ORDER BY u.i), array_agg(h.position ORDER BY u.i)
    INTO head_rev, head_pos
    FROM unnest(p_streams, p_prev) WITH ORDINALITY AS u(s, prev, i)
    LEFT JOIN LATERAL (
      SELECT e.revision, e.position FROM events e
      WHERE u.prev = 0 AND e.stream_id = u.s ORDER BY e.revision DESC LIMIT 1
    ) h ON true;

  -- Ids stored already, per append: in its own stream and anywhere.
  SELECT array_agg(coalesce(c.here, 0) ORDER BY g.i), array_agg(coalesce(c.anywhere, 0) ORDER BY g.i)
    INTO here, anywhere
    FROM generate_series(1, n) AS g(i)
    LEFT JOIN (
      SELECT u.a, count(*) FILTER (WHERE e.stream_id = p_streams[u.a]) AS here, count(*) AS anywhere
      FROM unnest(p_owner, p_ids) AS u(a, id) JOIN events e ON e.event_id = u.id
      GROUP BY u.a
    ) c ON c.a = g.i;

  FOR i IN 1..n LOOP
    IF p_prev[i] > 0 THEN
      cur_rev := after_rev[p_prev[i]];
      cur_pos := after_pos[p_prev[i]];
      cur_of := after_of[p_prev[i]];
    ELSE
      cur_rev := head_rev[i];
      cur_pos := head_pos[i];
      cur_of := 0;
    END IF;
    after_rev[i] := cur_rev;
    after_pos[i] := cur_pos;
    after_of[i] := cur_of;
    expected := p_expected[i];
    IF anywhere[i] > 0 THEN
      -- A replay of ids all stored in this stream is a no-op whatever expected says.
      st[i] := CASE WHEN here[i] = p_counts[i] AND cur_rev IS NOT NULL THEN 1 ELSE 3 END;
      rev[i] := cur_rev;
    ELSIF expected = -2 OR (expected = -1 AND cur_rev IS NULL) OR expected = cur_rev THEN
      st[i] := 0;
      accepted[i] := true;
      any_accepted := true;
      base[i] := coalesce(cur_rev, -1);
      first_event[i] := offs;
      rev[i] := base[i] + p_counts[i];
      accepted_rev[i] := rev[i];
      after_rev[i] := rev[i];
      after_pos[i] := NULL;
      after_of[i] := i;
    ELSE
      st[i] := 2;
      rev[i] := cur_rev;
    END IF;
    offs := offs + p_counts[i];
  END LOOP;

  IF any_accepted THEN
    -- ORDER BY: positions are drawn row by row after the sort, so they follow the batch's order.
    WITH ins AS (
      INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
      SELECT p_streams[u.a], base[u.a] + (u.k - first_event[u.a]), u.id, u.t, u.d::JSON, u.m::JSON
      FROM unnest(p_owner, p_ids, p_types, p_data, p_metadata) WITH ORDINALITY AS u(a, id, t, d, m, k)
      WHERE accepted[u.a]
      ORDER BY u.k
      RETURNING events.stream_id, events.revision, events.position
    )
    SELECT array_agg(ins.position ORDER BY g.i) INTO last_pos
      FROM unnest(p_streams, accepted_rev) WITH ORDINALITY AS g(s, r, i)
      LEFT JOIN ins ON ins.stream_id = g.s AND ins.revision = g.r;
  END IF;
  FOR i IN 1..n LOOP
    IF accepted[i] THEN
      pos[i] := last_pos[i];
    ELSIF after_of[i] > 0 THEN
      pos[i] := last_pos[after_of[i]];
    ELSE
      pos[i] := after_pos[i];
    END IF;
  END LOOP;

  RETURN QUERY SELECT * FROM unnest(st, rev, pos);
END $$;
`,
  },
  fencingMigration(APPEND_LOCK),
];

/** The versions recorded in this database. */
const appliedVersions = async (client: PoolClient): Promise<Set<number>> => {
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(rows.map((r) => Number(r.version)));
};

/**
 * Brings the schema up to date, in one transaction holding MIGRATION_LOCK: two processes starting
 * at once apply each migration once (the second waits, then finds them recorded). A database
 * migrated by a newer release (a version this one does not know) is refused rather than used.
 */
export const migrate = async (
  client: PoolClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> => {
  const applied: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version    INT PRIMARY KEY,
         name       TEXT NOT NULL,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const done = await appliedVersions(client);
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...done].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new Error(
        `the event store's schema has migration ${Math.max(...unknown)}, which this release ` +
          'does not know: it was migrated by a newer release',
      );
    }
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  return applied;
};
