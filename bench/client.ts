/** Small HTTP helpers for the suites that drive the app through its public API (127.0.0.1 only). */
import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import type { Role } from '../apps/control-plane/src/platform/auth/caller';
import { BENCH_SECRET } from './procs';

export const bearer = async (sub: string, roles: Role[]): Promise<string> =>
  `Bearer ${await new TokenService(BENCH_SECRET).sign({ sub, roles })}`;

export const api = async <T>(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  auth: string,
  body?: unknown,
): Promise<{ status: number; body: T }> => {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: auth,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
};

/** One GPU node as an operator's controller reports it. */
export const gpuNode = (hostname: string, model: string, cards = 8) => ({
  hostname,
  role: 'gpu',
  labels: { 'fleet/mode': 'shared' },
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: Array.from({ length: cards }, (_, g) => ({
    uuid: `GPU-${hostname}-${g}`,
    model,
    memoryGiB: 48,
  })),
  kubeletReady: true,
  unschedulable: false,
});

/** Reports nodes over HTTP (not measured); returns their ids by hostname. */
export const registerNodes = async (
  url: string,
  admin: string,
  clusterId: string,
  nodes: ReturnType<typeof gpuNode>[],
): Promise<Map<string, string>> => {
  const res = await api<{ nodes: Array<{ nodeId: string; hostname: string }> }>(
    url,
    'POST',
    '/v1/inventory/reports',
    admin,
    { clusterId, nodes },
  );
  if (res.status !== 200) throw new Error(`report answered ${res.status}`);
  return new Map(res.body.nodes.map((n) => [n.hostname, n.nodeId]));
};

export type Session = { sessionId: string; status: string; nodeId: string | null };

export type LogEvent = {
  type: string;
  position: number;
  data: { sessionId?: string; at: string; drainId?: string; nodeId?: string };
};

/** Events of the given types after `from` (a position), in log order. */
export const eventsAfter = async (
  url: string,
  auth: string,
  types: string,
  from: number,
): Promise<LogEvent[]> => {
  const out: LogEvent[] = [];
  let next = from + 1;
  for (;;) {
    const page = await api<{ events: LogEvent[]; nextPosition: number }>(
      url,
      'GET',
      `/v1/events?type=${types}&limit=1000&fromPosition=${next}`,
      auth,
    );
    out.push(...page.body.events);
    if (page.body.events.length < 1000) return out;
    next = page.body.nextPosition;
  }
};
