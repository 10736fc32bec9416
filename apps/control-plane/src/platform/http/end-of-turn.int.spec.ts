import http from 'node:http';
import net from 'node:net';
import Fastify, { FastifyInstance } from 'fastify';
import { EndOfTurn, writeAtEndOfTurn } from './end-of-turn';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('EndOfTurn', () => {
  it('calls nothing until the turn ends, then each call once, in order', async () => {
    const calls: string[] = [];
    const turn = new EndOfTurn(() => undefined);
    turn.defer(() => calls.push('a'));
    turn.defer(() => calls.push('b'));
    await Promise.resolve();
    expect(calls).toEqual([]);
    expect(turn.waiting).toBe(2);
    await nextTurn();
    expect(calls).toEqual(['a', 'b']);
    expect(turn.waiting).toBe(0);
  });

  it('reports a call that throws and still makes the ones after it', async () => {
    const errors: unknown[] = [];
    const called: string[] = [];
    const turn = new EndOfTurn((error) => errors.push(error));
    turn.defer(() => {
      throw new Error('boom');
    });
    turn.defer(() => called.push('b'));
    await nextTurn();
    expect(called).toEqual(['b']);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('puts a call deferred while the batch runs into the next turn', async () => {
    const called: string[] = [];
    const turn = new EndOfTurn(() => undefined);
    turn.defer(() => {
      called.push('first');
      turn.defer(() => called.push('later'));
    });
    await nextTurn();
    expect(called).toEqual(['first']);
    expect(turn.waiting).toBe(1);
    await nextTurn();
    expect(called).toEqual(['first', 'later']);
  });
});

describe('writeAtEndOfTurn (real HTTP)', () => {
  let fastify: FastifyInstance;
  let url: string;
  const errors: unknown[] = [];
  /** What the handler of /observed saw right after sending, and once the turn had ended. */
  const observed: Array<{ sent: boolean; pending: number; pendingAfterTurn?: number }> = [];
  let refusedRan = 0;

  beforeAll(async () => {
    fastify = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
    writeAtEndOfTurn(fastify.server, (error) => errors.push(error));
    fastify.post('/echo/:n', async (request) => ({
      n: (request.params as { n: string }).n,
      body: request.body,
    }));
    fastify.get('/observed', (_request, reply) => {
      void reply.send({ ok: true });
      const socket = reply.raw.socket!;
      const seen: (typeof observed)[number] = {
        sent: reply.sent,
        pending: socket.writableLength,
      };
      observed.push(seen);
      setImmediate(() => (seen.pendingAfterTurn = socket.writableLength));
    });
    // A hook answering for the route: the route must not run (Fastify reads `reply.sent`).
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.url === '/refused') return void reply.code(401).send({ error: 'no' });
      done();
    });
    fastify.get('/refused', async () => {
      refusedRan++;
      return { ran: true };
    });
    url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await fastify.close();
  });

  it('ends a response at once for Node and Fastify, and writes it to the socket at the end of the turn', async () => {
    observed.length = 0;
    const res = await fetch(`${url}/observed`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(observed).toHaveLength(1);
    expect(observed[0].sent).toBe(true);
    // Still in the socket's stream when the handler goes on; gone once the turn has ended.
    expect(observed[0].pending).toBeGreaterThan(0);
    expect(observed[0].pendingAfterTurn).toBe(0);
    expect(errors).toEqual([]);
  });

  it('stops the request where a hook answered it: the route does not run', async () => {
    const res = await fetch(`${url}/refused`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'no' });
    expect(refusedRan).toBe(0);
  });

  const post = (agent: http.Agent, n: number): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        `${url}/echo/${n}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ value: n * 7 }));
    });

  it('gives each of many concurrent requests, on 50 kept-alive connections, its own answer', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    try {
      const answers = await Promise.all(Array.from({ length: 400 }, (_, n) => post(agent, n)));
      answers.forEach((answer, n) => {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toEqual({ n: String(n), body: { value: n * 7 } });
      });
    } finally {
      agent.destroy();
    }
  });

  /** What the server sends back to `raw`, written on a connection of its own, until it closes. */
  const rawExchange = (raw: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const { port } = new URL(url);
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(raw));
      let got = '';
      socket.on('data', (chunk) => (got += chunk.toString()));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });

  it('writes what is sent before its socket is destroyed in the same turn (a refusal the parser answers)', async () => {
    // Fastify's client-error handler writes its 400 and destroys the socket at once.
    const got = await rawExchange('GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(errors).toEqual([]);
  });

  it('answers requests queued on one connection in order, and a large answer whole', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => post(agent, n)));
      expect(answers.map((a) => JSON.parse(a.body).n)).toEqual(
        Array.from({ length: 20 }, (_, n) => String(n)),
      );
      // Larger than a socket's buffer: written over several turns, in order.
      const big = 'x'.repeat(4 * 1024 * 1024);
      const res = await fetch(`${url}/echo/big`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ big }),
      });
      expect(((await res.json()) as { body: { big: string } }).body.big).toBe(big);
    } finally {
      agent.destroy();
    }
  });
});
