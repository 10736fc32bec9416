import http from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpVelero } from './http-velero';

type Seen = { method: string; url: string; key: string | undefined; body: unknown };

const double = async (status: (req: http.IncomingMessage) => number) => {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        key: req.headers['idempotency-key'] as string | undefined,
        body: text ? JSON.parse(text) : null,
      });
      res.writeHead(status(req)).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => server.close() };
};

const job = {
  backupId: 'b1',
  clusterId: 'c1',
  location: 's3://fleet-backups/t-1/c1/b1',
  includeNamespaces: ['inference'],
  snapshotVolumes: true,
};

describe('the HTTP Velero adapter against a controller double', () => {
  it('POSTs a backup and DELETEs one, each with its idempotency key', async () => {
    const v = await double(() => 200);
    const velero = new HttpVelero(v.url);
    await velero.backUp(job);
    await velero.deleteBackup(job);
    expect(v.seen).toEqual([
      { method: 'POST', url: '/v1/backups', key: 'b1:backup', body: job },
      { method: 'DELETE', url: '/v1/backups/b1', key: 'b1:delete', body: null },
    ]);
    v.close();
  });

  it('takes a 404 on delete as already gone, and any other failure as a failure', async () => {
    const gone = await double(() => 404);
    await expect(new HttpVelero(gone.url).deleteBackup(job)).resolves.toBeUndefined();
    await expect(new HttpVelero(gone.url).backUp(job)).rejects.toThrow(
      'velero answered 404 to backup b1',
    );
    gone.close();
    const broken = await double(() => 500);
    await expect(new HttpVelero(broken.url).deleteBackup(job)).rejects.toThrow(
      'velero answered 500 to deleting backup b1',
    );
    broken.close();
  });
});
