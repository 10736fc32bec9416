import http from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpCredentialIssuer } from './http-credential-issuer';

type Seen = { method?: string; url?: string; key?: string; body: unknown };

/** A local HTTP double of the provisioner's credential endpoint. */
const provisionerDouble = async (answer: (seen: Seen) => [number, unknown]) => {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const got = {
        method: req.method,
        url: req.url,
        key: req.headers['idempotency-key'] as string | undefined,
        body: JSON.parse(text),
      };
      seen.push(got);
      const [status, body] = answer(got);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
};

const request = {
  requestId: 'req-1',
  clusterId: 'c1',
  sub: 'kim',
  access: 'edit' as const,
  ttlSec: 600,
  now: new Date('2026-12-07T10:00:00Z'),
};

describe('the HTTP credential issuer', () => {
  it('POSTs the cluster, subject, access and ttl with the request as its key, and takes the answer', async () => {
    const double = await provisionerDouble(() => [
      200,
      { token: 'secret-token', expiresAt: '2026-12-07T10:10:00Z' },
    ]);
    try {
      const issued = await new HttpCredentialIssuer(double.url).issueCredential(request);
      expect(issued).toEqual({ token: 'secret-token', expiresAt: '2026-12-07T10:10:00Z' });
      expect(double.seen).toEqual([
        {
          method: 'POST',
          url: '/base/v1/credentials',
          key: 'req-1',
          body: { clusterId: 'c1', sub: 'kim', access: 'edit', ttlSec: 600 },
        },
      ]);
    } finally {
      await double.close();
    }
  });

  it('fails on a refusal or a malformed answer, naming neither body', async () => {
    const answers: Array<[number, unknown]> = [
      [503, { token: 'leaked-token' }],
      [200, { token: 'leaked-token' }],
    ];
    const double = await provisionerDouble(() => answers.shift()!);
    try {
      const issuer = new HttpCredentialIssuer(double.url);
      const refused = await issuer.issueCredential(request).catch((e: Error) => e);
      expect((refused as Error).message).toBe('provisioner answered 503 to a credential request');
      const malformed = await issuer.issueCredential(request).catch((e: Error) => e);
      expect((malformed as Error).message).not.toContain('leaked-token');
      expect((malformed as Error).message).toMatch(/without token and expiresAt/);
    } finally {
      await double.close();
    }
  });
});
