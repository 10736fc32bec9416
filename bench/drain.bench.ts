import { BenchSuite, Figure, percentile } from './lib';
import { REDIS_URL, redisScratch, startServer } from './procs';
import { LogEvent, Session, api, bearer, eventsAfter, gpuNode, registerNodes } from './client';

const ROUNDS = 20;
const SESSIONS = 8;

type Drain = { status: string; relocated: string[]; queued: string[]; terminated: string[] };

type Samples = { fromResponse: number[]; fromRequest: number[]; toEnded: number[] };

/**
 * One app (BullMQ on Redis, unique prefix) and ROUNDS drains, each in a fresh cluster: a source
 * node of 8 L40S cards holding 8 one-card sessions and an empty target node of 8 cards (every
 * earlier round's target is full and its source cordoned, so the target is the only room).
 * Per round: the time from the `POST /v1/nodes/{id}/drain` response (client clock) to the
 * `at` of the last of the 8 SessionResumed events (app clock, same host); the drain must end
 * `completed` with 8 relocated. Also from the request being sent, and to DrainEnded's `at`.
 */
const drains = async (parallelism: number | null): Promise<Samples> => {
  const scratch = redisScratch();
  const app = await startServer('app', {
    REDIS_URL,
    REDIS_PREFIX: scratch.prefix,
    NODE_STALE_SEC: '3600',
    CORDON_SYNC_SEC: '3600',
    ...(parallelism === null ? {} : { DRAIN_PARALLELISM: String(parallelism) }),
  });
  const out: Samples = { fromResponse: [], fromRequest: [], toEnded: [] };
  try {
    const admin = await bearer('bench-admin', ['admin']);
    const user = await bearer('drain-user', ['user']);
    const body = { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 };
    for (let round = 0; round < ROUNDS; round++) {
      const clusterId = `bench-d${round}`;
      const src = gpuNode(`src-${round}`, 'L40S', SESSIONS);
      const ids = await registerNodes(app.url, admin, clusterId, [src]);
      const srcId = ids.get(src.hostname)!;
      const sessions = await Promise.all(
        Array.from({ length: SESSIONS }, () =>
          api<Session>(app.url, 'POST', '/v1/sessions', user, body),
        ),
      );
      if (!sessions.every((s) => s.status === 201 && s.body.nodeId === srcId))
        throw new Error(`round ${round}: sessions not all running on the source node`);
      const mine = new Set(sessions.map((s) => s.body.sessionId));
      await registerNodes(app.url, admin, clusterId, [
        src,
        gpuNode(`dst-${round}`, 'L40S', SESSIONS),
      ]);
      await app.call('settle');
      const head = await app.call<number>('head');

      const sent = Date.now();
      const res = await api<{ drainId: string }>(
        app.url,
        'POST',
        `/v1/nodes/${srcId}/drain`,
        admin,
        {},
      );
      const responded = Date.now();
      if (res.status !== 202) throw new Error(`drain answered ${res.status}`);
      const until = Date.now() + 10_000;
      let drain: Drain | undefined;
      while (Date.now() < until) {
        const d = await api<Drain>(app.url, 'GET', `/v1/drains/${res.body.drainId}`, admin);
        if (d.body.status === 'completed') {
          drain = d.body;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      if (!drain) throw new Error(`round ${round}: drain not completed within 10 s`);
      if (drain.relocated.length !== SESSIONS)
        throw new Error(
          `round ${round}: ${drain.relocated.length} relocated, ${drain.queued.length} queued`,
        );
      const events: LogEvent[] = await eventsAfter(
        app.url,
        admin,
        'SessionResumed,DrainEnded',
        head,
      );
      const resumed = events.filter(
        (e) => e.type.startsWith('SessionResumed') && mine.has(e.data.sessionId ?? ''),
      );
      const ended = events.find(
        (e) => e.type.startsWith('DrainEnded') && e.data.drainId === res.body.drainId,
      );
      if (resumed.length !== SESSIONS || !ended)
        throw new Error(`round ${round}: ${resumed.length} SessionResumed events`);
      const last = Math.max(...resumed.map((e) => Date.parse(e.data.at)));
      out.fromResponse.push(last - responded);
      out.fromRequest.push(last - sent);
      out.toEnded.push(Date.parse(ended.data.at) - responded);
    }
    return out;
  } finally {
    await app.stop();
    await scratch.drop();
  }
};

const figure = (s: Samples, parallelism: number | null): Figure => {
  const p = (xs: number[], q: number) => percentile(xs, q);
  const p99 = p(s.fromResponse, 99);
  const label =
    parallelism === null ? 'default DRAIN_PARALLELISM (4)' : `DRAIN_PARALLELISM=${parallelism}`;
  return {
    name:
      parallelism === null
        ? 'drain.relocate_8_sessions_p99'
        : `drain.relocate_8_sessions_p99_parallelism_${parallelism}`,
    value: p99,
    unit: 'ms',
    target:
      `${parallelism === null ? '<= 250 ms' : 'informational'} (${label}; drain response → last SessionResumed at, ` +
      `${s.fromResponse.length} drains; p50 ${p(s.fromResponse, 50)} ms, max ${Math.max(...s.fromResponse)} ms; ` +
      `from the request sent: p50 ${p(s.fromRequest, 50)}, p99 ${p(s.fromRequest, 99)} ms; ` +
      `response → DrainEnded at: p50 ${p(s.toEnded, 50)}, p99 ${p(s.toEnded, 99)} ms; BullMQ)`,
    ...(parallelism === null ? { met: s.fromResponse.length >= 20 && p99 <= 250 } : {}),
  };
};

const run = async (): Promise<Figure[]> => [
  figure(await drains(null), null),
  figure(await drains(8), 8),
];

export const drainBench: BenchSuite = { name: 'drain', run };
