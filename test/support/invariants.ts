/**
 * The placement and billing invariants, read only through the public API as an auditor:
 * - no GPU card is held by two sessions, and a session holds cards on one node only;
 * - every running session holds exactly its cards (its `gpus`, on its node, with its id);
 * - no card is held by a session that is not running (a queued one is half placed);
 * - a paused or terminated session is billed exactly its running time, as its own event
 *   stream tells it (SessionStarted/SessionResumed `at` to SessionPaused `at` /
 *   SessionTerminated `endedAt`), and the verify endpoint agrees.
 * Read models lag the log a little, so `assertInvariants` retries until they agree or time is up.
 */

export type ApiClient = {
  /** The base URL now (a restarted child app listens on a new port). */
  readonly url: () => string;
  /** Headers of a caller that may read everything (admin or auditor). */
  readonly headers: Record<string, string>;
};

export type Scope = {
  /** Only the nodes of these clusters (default: every node). */
  readonly clusterIds?: readonly string[];
  /** Only these sessions are held to the running/billing rules (default: every session). */
  readonly sessionIds?: Iterable<string>;
};

type Card = { uuid: string; model: string; sessionId: string | null };
type NodeView = { nodeId: string; hostname: string; clusterId: string; status: string };
export type SessionView = {
  sessionId: string;
  owner: string;
  kind: string;
  request: { gpuModel?: string; gpuCount?: number };
  status: 'queued' | 'running' | 'paused' | 'terminated';
  nodeId: string | null;
  gpus: string[];
  terminationReason: string | null;
};
export type StreamEvent = {
  type: string;
  revision: number;
  data: Record<string, unknown>;
};
type BillingRecord = { recordId: string; sessionId: string; seconds: number; from: string };

const MAX_PAGES = 10_000;

export const getJson = async <T>(client: ApiClient, route: string): Promise<T> => {
  const res = await fetch(`${client.url()}${route}`, {
    headers: client.headers,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${route} → ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
};

const allPages = async <T>(client: ApiClient, route: string): Promise<T[]> => {
  const out: T[] = [];
  let cursor: string | null = null;
  const sep = route.includes('?') ? '&' : '?';
  for (let page = 0; page < MAX_PAGES; page++) {
    const q: string = cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : '';
    const body: { items: T[]; nextCursor?: string | null } = await getJson(client, `${route}${q}`);
    out.push(...body.items);
    cursor = body.nextCursor ?? null;
    if (!cursor) return out;
  }
  throw new Error(`${route}: more than ${MAX_PAGES} pages`);
};

/** A session's whole event stream, in revision order. */
export const sessionStream = async (
  client: ApiClient,
  sessionId: string,
): Promise<StreamEvent[]> => {
  const out: StreamEvent[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const body = await getJson<{ events: StreamEvent[] }>(
      client,
      `/v1/streams/session-${sessionId}?fromRevision=${out.length}&limit=1000`,
    );
    // Stored type names are versioned (SessionPaused.v1): the checker reads the name.
    out.push(...body.events.map((e) => ({ ...e, type: e.type.replace(/\.v\d+$/, '') })));
    if (body.events.length < 1000) return out;
  }
  throw new Error(`session-${sessionId}: stream too long`);
};

/** Running milliseconds of a session from its events: the ground truth billing must match. */
export const runningMs = (events: readonly StreamEvent[]): number => {
  let open: number | null = null;
  let total = 0;
  for (const e of events) {
    const t = (field: string): number => Date.parse(String(e.data[field]));
    switch (e.type) {
      case 'SessionStarted':
      case 'SessionResumed':
        open = t('at');
        break;
      case 'SessionPaused':
        if (open !== null) total += t('at') - open;
        open = null;
        break;
      case 'SessionTerminated':
        if (open !== null) total += t('endedAt') - open;
        open = null;
        break;
      default:
        break;
    }
  }
  return total;
};

export const countEvents = (events: readonly StreamEvent[], type: string): number =>
  events.filter((e) => e.type === type).length;

export const listSessions = (client: ApiClient): Promise<SessionView[]> =>
  allPages<SessionView>(client, '/v1/sessions?limit=1000');

/** Checks a session's bill against its stream; '' when it agrees, else what is wrong. */
export const billingProblem = async (client: ApiClient, sessionId: string): Promise<string> => {
  const events = await sessionStream(client, sessionId);
  const records = await allPages<BillingRecord>(
    client,
    `/v1/billing/records?sessionId=${sessionId}&limit=1000`,
  );
  const billedMs = records.reduce((sum, r) => sum + Math.round(r.seconds * 1000), 0);
  const ranMs = runningMs(events);
  const segments = events.filter(
    (e) => e.type === 'SessionStarted' || e.type === 'SessionResumed',
  ).length;
  const problems: string[] = [];
  if (billedMs !== ranMs) problems.push(`billed ${billedMs} ms but ran ${ranMs} ms`);
  if (records.length !== segments)
    problems.push(`${records.length} records for ${segments} running segments`);
  const verify = await getJson<{ ok: boolean; recorded: unknown; recomputed: unknown }>(
    client,
    `/v1/billing/sessions/${sessionId}/verify`,
  );
  if (!verify.ok) problems.push(`verify not ok: ${JSON.stringify(verify).slice(0, 400)}`);
  return problems.join('; ');
};

/** Sessions that hold cards while not running (queued: a placement between its two steps). */
export const halfPlaced = async (
  client: ApiClient,
  clusterIds?: readonly string[],
): Promise<Map<string, string>> => {
  const nodes = clusterIds
    ? (
        await Promise.all(
          clusterIds.map((c) =>
            allPages<NodeView>(client, `/v1/nodes?clusterId=${encodeURIComponent(c)}&limit=1000`),
          ),
        )
      ).flat()
    : await allPages<NodeView>(client, '/v1/nodes?limit=1000');
  const holders = new Map<string, string[]>();
  for (const n of nodes) {
    const body = await getJson<{ items: Card[] }>(client, `/v1/nodes/${n.nodeId}/gpus`);
    for (const card of body.items) {
      if (card.sessionId)
        holders.set(card.sessionId, [...(holders.get(card.sessionId) ?? []), card.uuid]);
    }
  }
  const status = new Map((await listSessions(client)).map((s) => [s.sessionId, s.status]));
  const out = new Map<string, string>();
  for (const [id, cards] of holders) {
    const st = status.get(id) ?? 'unknown';
    if (st !== 'running') out.set(id, `${st} session ${id} holds [${cards.sort().join(',')}]`);
  }
  return out;
};

/**
 * Samples for `windowMs` and returns the sessions seen holding cards while not running for
 * longer than `graceMs` in a row (stuck half placed), with what was seen.
 */
export const stuckHalfPlaced = async (
  client: ApiClient,
  opts: { windowMs: number; graceMs: number; clusterIds?: readonly string[] },
): Promise<string[]> => {
  const since = new Map<string, number>();
  const stuck = new Map<string, string>();
  const until = Date.now() + opts.windowMs;
  for (let i = 0; i < 10_000 && Date.now() < until; i++) {
    const now = Date.now();
    const seen = await halfPlaced(client, opts.clusterIds);
    for (const id of [...since.keys()]) if (!seen.has(id)) since.delete(id);
    for (const [id, what] of seen) {
      const first = since.get(id) ?? now;
      since.set(id, first);
      if (now - first > opts.graceMs) stuck.set(id, `${what} for ${now - first} ms`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return [...stuck.values()];
};

export type InvariantChecker = {
  /** One look: the list of violations (empty when every invariant holds). */
  check(scope?: Scope): Promise<string[]>;
  /** Looks again until none is violated, for up to `timeoutMs`; throws with the last violations. */
  assert(scope?: Scope, timeoutMs?: number): Promise<void>;
};

/**
 * A checker for one app. Billing of a terminated session is final once it agreed (records are
 * insert-only and a terminated session appends nothing), so it is not fetched again.
 */
export const invariantChecker = (client: ApiClient): InvariantChecker => {
  const settled = new Set<string>();

  const check = async (scope: Scope = {}): Promise<string[]> => {
    const violations: string[] = [];
    const nodes = scope.clusterIds
      ? (
          await Promise.all(
            scope.clusterIds.map((c) =>
              allPages<NodeView>(client, `/v1/nodes?clusterId=${encodeURIComponent(c)}&limit=1000`),
            ),
          )
        ).flat()
      : await allPages<NodeView>(client, '/v1/nodes?limit=1000');
    const cardsOf = new Map<string, Card[]>();
    await Promise.all(
      nodes.map(async (n) => {
        const body = await getJson<{ items: Card[] }>(client, `/v1/nodes/${n.nodeId}/gpus`);
        cardsOf.set(n.nodeId, body.items);
      }),
    );
    const sessions = await listSessions(client);
    const byId = new Map(sessions.map((s) => [s.sessionId, s]));
    const wanted = scope.sessionIds ? new Set(scope.sessionIds) : null;
    const inScope = (s: SessionView): boolean => !wanted || wanted.has(s.sessionId);

    // Who holds what, as the nodes' cards tell it.
    const holderOfCard = new Map<string, string>();
    const heldBy = new Map<string, { nodeId: string; uuids: string[] }[]>();
    for (const n of nodes) {
      for (const card of cardsOf.get(n.nodeId) ?? []) {
        if (card.sessionId === null) continue;
        const other = holderOfCard.get(card.uuid);
        if (other !== undefined && other !== card.sessionId) {
          violations.push(`card ${card.uuid} held by two sessions: ${other} and ${card.sessionId}`);
        }
        holderOfCard.set(card.uuid, card.sessionId);
        const list = heldBy.get(card.sessionId) ?? [];
        const onNode = list.find((h) => h.nodeId === n.nodeId);
        if (onNode) onNode.uuids.push(card.uuid);
        else list.push({ nodeId: n.nodeId, uuids: [card.uuid] });
        heldBy.set(card.sessionId, list);
      }
    }
    const nodeIds = new Set(nodes.map((n) => n.nodeId));

    for (const [sessionId, holdings] of heldBy) {
      const s = byId.get(sessionId);
      const where = holdings.map((h) => `${h.nodeId}:[${h.uuids.join(',')}]`).join(' ');
      if (!s) {
        violations.push(`cards ${where} held by unknown session ${sessionId}`);
        continue;
      }
      if (s.status !== 'running') {
        violations.push(`cards ${where} held by ${s.status} session ${sessionId}`);
        continue;
      }
      if (holdings.length > 1) violations.push(`session ${sessionId} holds cards on ${where}`);
      const mine = holdings.find((h) => h.nodeId === s.nodeId);
      if (!mine) {
        violations.push(
          `running session ${sessionId} on ${s.nodeId} holds cards elsewhere: ${where}`,
        );
        continue;
      }
      const expected = [...s.gpus].sort().join(',');
      if ([...mine.uuids].sort().join(',') !== expected) {
        violations.push(
          `running session ${sessionId} holds [${mine.uuids.sort().join(',')}] but runs on [${expected}]`,
        );
      }
    }

    const billingChecks: string[] = [];
    for (const s of sessions) {
      if (!inScope(s) || s.kind !== 'gpu') continue;
      if (s.status === 'running') {
        if (s.nodeId === null) violations.push(`running session ${s.sessionId} has no node`);
        else if (nodeIds.has(s.nodeId) && !heldBy.has(s.sessionId))
          violations.push(`running session ${s.sessionId} holds no card on ${s.nodeId}`);
        else if (!nodeIds.has(s.nodeId) && scope.clusterIds && wanted)
          violations.push(`running session ${s.sessionId} on ${s.nodeId}, outside the fleet`);
        if (s.gpus.length !== s.request.gpuCount)
          violations.push(
            `running session ${s.sessionId} has ${s.gpus.length} cards for ${s.request.gpuCount}`,
          );
      }
      if ((s.status === 'paused' || s.status === 'terminated') && !settled.has(s.sessionId))
        billingChecks.push(s.sessionId);
    }
    if (wanted) {
      for (const id of wanted) if (!byId.has(id)) violations.push(`session ${id} is not listed`);
    }
    const problems = await Promise.all(
      billingChecks.map(async (id) => ({ id, problem: await billingProblem(client, id) })),
    );
    for (const { id, problem } of problems) {
      if (problem) violations.push(`billing of ${byId.get(id)?.status} session ${id}: ${problem}`);
      else if (byId.get(id)?.status === 'terminated') settled.add(id);
    }
    return violations;
  };

  return {
    check,
    async assert(scope: Scope = {}, timeoutMs = 2000): Promise<void> {
      const until = Date.now() + timeoutMs;
      let last: string[] = [];
      for (let attempt = 0; attempt < 1000; attempt++) {
        last = await check(scope);
        if (last.length === 0) return;
        if (Date.now() > until) break;
        await new Promise((r) => setTimeout(r, 150));
      }
      throw new Error(`invariants violated:\n  ${last.join('\n  ')}`);
    },
  };
};
