import http from 'node:http';
import type { Server } from 'node:http';
import { writesAtEndOfTurn } from '../../apps/control-plane/src/platform/http/end-of-turn';
import { startApp, TestApp } from '../support/app';
import { gpuNode, report } from '../support/reports';

/**
 * The app writes each turn's responses at its end (platform/http/end-of-turn.ts): many
 * requests in flight on kept-alive connections, reports, no-op cordons and reads mixed, each
 * answered with its own status, body and correlation id.
 */
describe('responses written at the end of the turn (the real app)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  const CLUSTER = 'end-of-turn';

  beforeAll(async () => {
    t = await startApp({}, { redis: false });
    admin = await t.auth('root', ['admin']);
  });
  afterAll(async () => t.close());

  type Answer = { status: number; correlationId: string | undefined; body: unknown };
  const send = (
    agent: http.Agent,
    method: 'GET' | 'POST',
    path: string,
    correlationId: string,
    body?: unknown,
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        `${t.url}${path}`,
        {
          method,
          agent,
          headers: {
            ...admin,
            'x-correlation-id': correlationId,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              correlationId: res.headers['x-correlation-id'] as string | undefined,
              body: JSON.parse(text),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });

  it('is installed on the app, and not when asked to write at once', async () => {
    expect(writesAtEndOfTurn(t.app.getHttpServer() as Server)).toBe(true);
    const atOnce = await startApp({}, { redis: false, endOfTurnSends: false });
    try {
      expect(writesAtEndOfTurn(atOnce.app.getHttpServer() as Server)).toBe(false);
    } finally {
      await atOnce.close();
    }
  });

  it('answers 300 mixed requests on 30 kept-alive connections, each with its own answer', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 30 });
    try {
      const nodes = Array.from({ length: 10 }, (_, i) => gpuNode(`eot-${i}`, 1));
      const registered = await send(agent, 'POST', '/v1/inventory/reports', 'setup', {
        ...report(CLUSTER, nodes),
      });
      expect(registered.status).toBe(200);
      const ids = (registered.body as { nodes: Array<{ nodeId: string; hostname: string }> }).nodes;
      for (const { nodeId } of ids) {
        expect((await send(agent, 'POST', `/v1/nodes/${nodeId}/cordon`, 'setup', {})).status).toBe(
          200,
        );
      }
      const requests = Array.from({ length: 300 }, (_, n) => {
        const node = ids[n % ids.length];
        const id = `req-${n}`;
        switch (n % 4) {
          case 0:
            return send(
              agent,
              'POST',
              '/v1/inventory/reports',
              id,
              report(CLUSTER, [nodes[n % 10]]),
            );
          case 1:
            return send(agent, 'POST', `/v1/nodes/${node.nodeId}/cordon`, id, {});
          case 2:
            return send(agent, 'GET', `/v1/nodes/${node.nodeId}`, id);
          default:
            // A refusal among them: an unknown node.
            return send(
              agent,
              'GET',
              `/v1/nodes/00000000-0000-5000-8000-${String(n).padStart(12, '0')}`,
              id,
            );
        }
      });
      const answers = await Promise.all(requests);
      answers.forEach((answer, n) => {
        const node = ids[n % ids.length];
        expect(answer.correlationId).toBe(`req-${n}`);
        switch (n % 4) {
          case 0:
            expect(answer.status).toBe(200);
            expect(answer.body).toMatchObject({
              nodes: [{ hostname: node.hostname, nodeId: node.nodeId, status: 'cordoned' }],
            });
            break;
          case 1:
          case 2:
            expect(answer.status).toBe(200);
            expect(answer.body).toMatchObject({ nodeId: node.nodeId, status: 'cordoned' });
            break;
          default:
            expect(answer.status).toBe(404);
            expect(answer.body).toMatchObject({ error: { code: 'not_found' } });
        }
      });
    } finally {
      agent.destroy();
    }
  });
});
