import net from 'node:net';
import { ConfigError } from '../../config/config';
import { reachEventStore, reachMongo, reachTcp } from './wait-for-stores';

/** A port nothing listens on (taken, then freed). */
const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe('the stores’ tries, against a closed port', () => {
  it('reachTcp says the connection was refused', async () => {
    const port = await closedPort();
    await expect(reachTcp('127.0.0.1', port, 1_000)).rejects.toThrow(
      `connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('reachEventStore says so before its client is even made', async () => {
    const port = await closedPort();
    await expect(reachEventStore(`kurrentdb://127.0.0.1:${port}?tls=false`, 1_000)).rejects.toThrow(
      `connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('reachEventStore bounds a server that takes the connection and never answers', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const started = Date.now();
      await expect(
        reachEventStore(`kurrentdb://127.0.0.1:${port}?tls=false`, 1_000),
      ).rejects.toThrow(/^a read of \$all (failed|was not answered within 1000 ms)/);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      silent.close();
      for (const socket of sockets) socket.destroy();
    }
  });

  it('reachEventStore refuses a URL its client cannot read, as configuration, without the URL', async () => {
    const error = await reachEventStore('kurrentdb://admin:s3cret@', 1_000).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/^invalid configuration: EVENTSTORE_URL: the KurrentDB client/);
    expect(error.message).not.toContain('s3cret');
  });

  it('reachEventStore tries a postgres:// URL with PostgreSQL’s client, without the password', async () => {
    const port = await closedPort();
    const error = await reachEventStore(
      `postgres://fleet:s3cret@127.0.0.1:${port}/fleet`,
      1_000,
    ).catch((e: Error) => e);
    expect(error?.message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('reachMongo says the connection was refused', async () => {
    const port = await closedPort();
    await expect(
      reachMongo(`mongodb://127.0.0.1:${port}/?directConnection=true`, 500),
    ).rejects.toThrow(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('reachMongo refuses a URL its client cannot read, as configuration', async () => {
    await expect(
      reachMongo('mongodb://127.0.0.1:27017/?directConnection=maybe', 500),
    ).rejects.toThrow(ConfigError);
  });
});
