import fs from 'node:fs';
import path from 'node:path';
import { ROOT, Service, readCompose } from './deploy-files';

const compose = readCompose('docker-compose.ha.yml');
const services = Object.entries(compose.services);
const replicas = services.filter(([, s]) => s.build !== undefined);
const stores = services.filter(([, s]) => s.build === undefined);
const envOf = (s: Service): Record<string, string> =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));

/** Every setting name config.ts reads (its `'NAME'` literals). */
const settings = new Set(
  [
    ...fs
      .readFileSync(path.join(ROOT, 'apps/control-plane/src/config/config.ts'), 'utf8')
      .matchAll(/'([A-Z][A-Z0-9_]+)'/g),
  ].map((m) => m[1]),
);

describe('docker-compose.ha.yml', () => {
  it('runs three replicas of the app on PostgreSQL and Redis', () => {
    expect(replicas.map(([name]) => name)).toEqual(['app1', 'app2', 'app3']);
    expect(stores.map(([name]) => name).sort()).toEqual(['postgres', 'redis']);
    expect(new Set(replicas.map(([, s]) => s.image)).size).toBe(1);
  });

  it('gives every replica the same log, Redis, prefix and token secret', () => {
    const envs = replicas.map(([, s]) => envOf(s));
    for (const name of ['EVENTSTORE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'AUTH_JWT_SECRET']) {
      expect(envs[0][name]).toBeTruthy();
      expect(new Set(envs.map((e) => e[name])).size).toBe(1);
    }
    expect(new URL(envs[0].EVENTSTORE_URL).protocol).toBe('postgres:');
    expect(new URL(envs[0].EVENTSTORE_URL).hostname).toBe('postgres');
    expect(new URL(envs[0].REDIS_URL).hostname).toBe('redis');
  });

  it('names only settings the app reads', () => {
    for (const [, s] of replicas) {
      const unknown = Object.keys(envOf(s)).filter((name) => !settings.has(name));
      expect(unknown).toEqual([]);
    }
    expect(settings.has('EVENTSTORE_URL')).toBe(true);
  });

  it('points EVENTSTORE_URL at the database and user the PostgreSQL service creates', () => {
    const url = new URL(envOf(replicas[0][1]).EVENTSTORE_URL);
    const pg = envOf(compose.services.postgres);
    expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
    expect(url.username).toBe(pg.POSTGRES_USER);
    expect(url.password).toBe(pg.POSTGRES_PASSWORD);
  });

  it('publishes each replica on a port of its own, with a data directory of its own', () => {
    const ports = replicas.map(([, s]) => String(s.ports?.[0]));
    expect(new Set(ports).size).toBe(3);
    const volumes = replicas.map(([, s]) => JSON.stringify((s as { volumes?: unknown }).volumes));
    expect(new Set(volumes).size).toBe(3);
  });

  it.each(stores)(
    '%s has a healthcheck, publishes no port, and the replicas wait for it',
    (name, store) => {
      expect(store.healthcheck?.test).toBeDefined();
      expect(store.ports ?? []).toEqual([]);
      for (const [, s] of replicas) {
        expect((s.depends_on as Record<string, { condition?: string }>)[name]).toEqual({
          condition: 'service_healthy',
        });
      }
    },
  );

  it('lets a replica resign the lease before Docker kills it', () => {
    for (const [, s] of replicas)
      expect(Number(/^(\d+)s$/.exec(s.stop_grace_period ?? '')?.[1])).toBeGreaterThan(10);
  });
});
