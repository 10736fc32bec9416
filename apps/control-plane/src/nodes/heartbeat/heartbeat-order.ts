/**
 * The report order across replicas, decided in Redis. A report that changes a node and carries
 * an observedAt claims its place in the node's order before its events are appended: for each
 * node, atomically, either the stored observedAt is later (another replica saw a newer report
 * of the node, perhaps one that changed nothing and so appended nothing) and is answered, or
 * the claim's sighting is written. Claims and sightings (TOUCH_LUA keeps the later times) of
 * one node are thereby ordered by Redis: two replicas cannot both decide against a stale
 * newest, since the second to claim sees the first's observedAt.
 *
 * ARGV: nodeId, seenAt, observedAt, for each node. Answers, per node, '' (claimed) or the
 * later stored observedAt.
 */
export const CLAIM_ORDER_LUA = `
local key = KEYS[1]
local out = {}
for i = 1, #ARGV / 3 do
  local field, seen, observed = ARGV[i * 3 - 2], ARGV[i * 3 - 1], ARGV[i * 3]
  local was = redis.call('HGET', key, field)
  local sep = was and string.find(was, ':', 1, true)
  local later = ''
  if sep then
    local oldSeen, oldObserved = string.sub(was, 1, sep - 1), string.sub(was, sep + 1)
    local o = tonumber(oldObserved)
    if o and o > tonumber(observed) then later = oldObserved end
    local s = tonumber(oldSeen)
    if s and s > tonumber(seen) then seen = oldSeen end
  end
  if later == '' then redis.call('HSET', key, field, seen .. ':' .. observed) end
  out[i] = later
end
return out
`;

/** The script's answers: null where the claim was written, else the later observedAt (ms). */
export const claimAnswers = (answers: readonly string[]): Array<number | null> =>
  answers.map((a) => (a === '' ? null : Number(a)));
