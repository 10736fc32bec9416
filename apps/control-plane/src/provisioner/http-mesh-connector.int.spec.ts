import http from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpMeshConnector } from './http-mesh-connector';

type Seen = { method: string; url: string; key: string | undefined; body: unknown };

/** A provisioner double: records each call and answers with the status it is given. */
const double = async (status: () => number) => {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        key: req.headers['idempotency-key'] as string | undefined,
        body: JSON.parse(text || 'null'),
      });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/base`, seen, close: () => server.close() };
};

const request = {
  meshRequestId: 'm1',
  from: { clusterId: 'a', podCidr: '10.1.0.0/16', serviceCidr: '10.101.0.0/16' },
  to: { clusterId: 'b', podCidr: '10.2.0.0/16', serviceCidr: '10.102.0.0/16' },
};

describe('the HTTP mesh connector against a provisioner double', () => {
  it('POSTs connect and disconnect with the request and an idempotency key per action', async () => {
    const p = await double(() => 200);
    const connector = new HttpMeshConnector(p.url);
    await connector.connectMesh(request);
    await connector.disconnectMesh(request);
    expect(p.seen).toEqual([
      { method: 'POST', url: '/base/v1/mesh/connect', key: 'm1:connect', body: request },
      { method: 'POST', url: '/base/v1/mesh/disconnect', key: 'm1:disconnect', body: request },
    ]);
    p.close();
  });

  it('fails with the status the provisioner answered', async () => {
    const p = await double(() => 503);
    await expect(new HttpMeshConnector(p.url).connectMesh(request)).rejects.toThrow(
      'provisioner answered 503 to mesh connect',
    );
    p.close();
  });

  it('fails when the provisioner does not answer in time', async () => {
    const server = http.createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await expect(
      new HttpMeshConnector(`http://127.0.0.1:${port}`, 200).connectMesh(request),
    ).rejects.toThrow();
    server.closeAllConnections();
    server.close();
  });
});
