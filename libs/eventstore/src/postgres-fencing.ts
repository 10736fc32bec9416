import { LEADERSHIP_STREAM } from './port';
import type { Migration } from './postgres-schema';

/**
 * Version 2: fencing. `events_append_fenced` is the batch append for batches where an append
 * carries a lease term (`p_epochs[i]` ≥ 0; -1 none): under APPEND_LOCK it reads the newest term
 * recorded in the leadership stream (one index probe) and turns each append of an older term
 * into one that cannot match its expected revision, reported as status 4 with the newest term
 * in the revision column. A term recorded earlier in the same batch fences the appends after
 * it. Batches without terms (every request's) keep calling `events_append_batch`: no cost there.
 */
export const fencingMigration = (appendLock: bigint): Migration => ({
  version: 2,
  name: 'fencing',
  sql: `
CREATE FUNCTION events_append_fenced(
  p_epochs   BIGINT[], -- per append: its lease term, or -1
  p_streams  TEXT[],
  p_expected BIGINT[],
  p_prev     INT[],
  p_counts   INT[],
  p_owner    INT[],
  p_ids      TEXT[],
  p_types    TEXT[],
  p_data     TEXT[],
  p_metadata TEXT[]
) RETURNS TABLE (out_status SMALLINT, out_revision BIGINT, out_position BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  n INT := coalesce(array_length(p_streams, 1), 0);
  newest BIGINT;
  expected BIGINT[] := p_expected;
  fenced BOOLEAN[] := array_fill(false, ARRAY[n]);
BEGIN
  -- Taken before the leadership stream is read, as the batch function takes it for the heads.
  PERFORM pg_advisory_xact_lock(${appendLock});
  SELECT (e.data->>'epoch')::BIGINT INTO newest FROM events e
    WHERE e.stream_id = '${LEADERSHIP_STREAM}' ORDER BY e.revision DESC LIMIT 1;
  newest := coalesce(newest, 0);
  FOR i IN 1..n LOOP
    IF p_epochs[i] >= 0 AND p_epochs[i] < newest THEN
      fenced[i] := true;
      expected[i] := -3; -- never met: the batch function writes nothing of it
    ELSIF p_streams[i] = '${LEADERSHIP_STREAM}' AND p_epochs[i] > newest THEN
      newest := p_epochs[i];
    END IF;
  END LOOP;
  RETURN QUERY
    SELECT CASE WHEN fenced[b.i] AND b.s = 2 THEN 4::SMALLINT ELSE b.s END,
           CASE WHEN fenced[b.i] AND b.s = 2 THEN newest ELSE b.r END,
           b.p
    FROM events_append_batch(p_streams, expected, p_prev, p_counts, p_owner, p_ids, p_types,
                             p_data, p_metadata) WITH ORDINALITY AS b(s, r, p, i)
    ORDER BY b.i;
END $$;
`,
});
