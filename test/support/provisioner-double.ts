import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the double received: path, Idempotency-Key and the JSON body. */
export type ProvisionerCall = {
  readonly path: string;
  readonly key: string | undefined;
  readonly body: Record<string, unknown>;
};

/**
 * An HTTP provisioner double (PROVISIONER_URL): records every request and answers `status()`
 * (202 unless told otherwise). It reports no transitions back: a test posts them itself.
 */
export const startProvisionerDouble = async (
  status: (call: ProvisionerCall) => number = () => 202,
) => {
  const calls: ProvisionerCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const key = req.headers['idempotency-key'];
      const call = {
        path: req.url ?? '',
        key: typeof key === 'string' ? key : undefined,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
      calls.push(call);
      res.writeHead(status(call)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
