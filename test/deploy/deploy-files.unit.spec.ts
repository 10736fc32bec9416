import fs from 'node:fs';
import path from 'node:path';
import {
  ROOT,
  Service,
  finalStage,
  healthcheckCommand,
  imageScripts,
  readCompose,
  readDockerfile,
} from './deploy-files';

const compose = readCompose();
const services = Object.entries(compose.services);
/** The service built from this repo; every other one is a store it uses. */
const [appName, app] = services.find(([, s]) => s.build !== undefined) ?? ['', {} as Service];
const stores = services.filter(([name]) => name !== appName);

/** The oldest version of each store's image the stack may run. */
const MINIMUM: Record<string, number[]> = {
  'docker.kurrent.io/kurrent-latest/kurrentdb': [25, 1],
  'docker.kurrent.io/kurrent-lts/kurrentdb': [25, 1],
  'kurrentplatform/kurrentdb': [25, 1],
  mongo: [8],
  redis: [7],
};

/** `mongo:8.0` → ['mongo', [8, 0]]; no tag, or one without a version (`latest`), gives []. */
const imageVersion = (image: string): [string, number[]] => {
  const colon = image.lastIndexOf(':');
  if (colon < 0 || image.indexOf('/', colon) >= 0) return [image, []];
  const version = /^(\d+(?:\.\d+)*)/.exec(image.slice(colon + 1));
  return [image.slice(0, colon), version ? version[1].split('.').map(Number) : []];
};

/** Whether version `a` is at least `b`, part by part (a missing part counts as 0). */
const atLeast = (a: readonly number[], b: readonly number[]): boolean => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
};

const RESTART = /^(unless-stopped|on-failure(:\d+)?)$/;

describe('docker-compose.yml', () => {
  it('has the app and its three stores', () => {
    expect(appName).toBe('app');
    expect(stores.map(([name]) => name).sort()).toEqual(['eventstore', 'mongo', 'redis']);
  });

  it.each(stores)('%s has a healthcheck', (_name, store) => {
    const test = store.healthcheck?.test;
    expect(store.healthcheck?.disable).not.toBe(true);
    expect(Array.isArray(test) ? test.length : (test ?? '').length).toBeGreaterThan(0);
    // ['NONE'] turns the image's own check off.
    expect(Array.isArray(test) ? test[0] : test).not.toBe('NONE');
  });

  it.each(stores)('%s publishes no port', (_name, store) => {
    expect(store.ports ?? []).toEqual([]);
  });

  it.each(services)('%s restarts by itself', (_name, service) => {
    expect(service.restart).toMatch(RESTART);
  });

  it.each(stores)('the app starts only once %s is healthy', (name) => {
    const dependsOn = app.depends_on;
    expect(Array.isArray(dependsOn)).toBe(false);
    expect((dependsOn as Record<string, { condition?: string }>)[name]).toEqual({
      condition: 'service_healthy',
    });
  });

  it("points each of the app's store settings at a store it waits for", () => {
    const env = app.environment ?? {};
    const hosts = Object.fromEntries(
      ['EVENTSTORE_URL', 'MONGO_URL', 'REDIS_URL'].map((setting) => {
        expect(env[setting]).toBeDefined();
        return [setting, new URL(String(env[setting])).hostname];
      }),
    );
    expect(hosts).toEqual({ EVENTSTORE_URL: 'eventstore', MONGO_URL: 'mongo', REDIS_URL: 'redis' });
    // The scheme of the KurrentDB client; esdb:// is its deprecated alias.
    expect(String(env.EVENTSTORE_URL)).toMatch(/^kurrentdb:\/\//);
  });

  it('publishes only the app’s port 3000', () => {
    expect(app.ports).toEqual(['3000:3000']);
  });

  it.each(stores)('runs %s at a current version', (_name, store) => {
    const [repository, version] = imageVersion(store.image ?? '');
    expect(Object.keys(MINIMUM)).toContain(repository);
    expect(version.length).toBeGreaterThan(0);
    expect({ image: store.image, current: atLeast(version, MINIMUM[repository]) }).toEqual({
      image: store.image,
      current: true,
    });
  });

  it('reads image versions as versions, not as text', () => {
    expect(imageVersion('docker.kurrent.io/kurrent-latest/kurrentdb:26.1.1')[1]).toEqual([
      26, 1, 1,
    ]);
    expect(atLeast([25, 10], [25, 9])).toBe(true);
    expect(atLeast([25, 0, 9], [25, 1])).toBe(false);
    expect(atLeast([7], [7, 0])).toBe(true);
    expect(imageVersion('redis')[1]).toEqual([]);
    expect(imageVersion('redis:latest')[1]).toEqual([]);
    expect(imageVersion('localhost:5000/redis')[1]).toEqual([]);
  });

  it('runs MongoDB as the one-node replica set MONGO_URL names, initiated by its healthcheck', () => {
    const mongo = compose.services.mongo;
    const command = mongo.command ?? [];
    const replSet = command[command.indexOf('--replSet') + 1];
    expect(replSet).toBeTruthy();
    expect(new URL(String(app.environment?.MONGO_URL)).searchParams.get('replicaSet')).toBe(
      replSet,
    );
    const check = ([] as string[]).concat(mongo.healthcheck?.test ?? []).join(' ');
    expect(check).toContain(`rs.initiate({ _id: '${replSet}'`);
    // Healthy only with a primary to write to, not merely once mongod answers.
    expect(check).toMatch(/isWritablePrimary\) quit\(1\)/);
  });

  it('lets the app end its own shutdown (10 s deadline) before Docker kills it', () => {
    const grace = /^(\d+)s$/.exec(app.stop_grace_period ?? '');
    expect(Number(grace?.[1])).toBeGreaterThan(10);
  });
});

describe('docker-compose.ports.yml', () => {
  const ports = readCompose('docker-compose.ports.yml');

  it('publishes the stores’ ports on the loopback only, and nothing of the app', () => {
    expect(Object.keys(ports.services).sort()).toEqual(stores.map(([name]) => name).sort());
    for (const service of Object.values(ports.services)) {
      for (const port of service.ports ?? [])
        expect(String(port)).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
    }
  });

  it('is not an override file `docker compose up` would load by itself', () => {
    for (const name of ['docker-compose.override.yml', 'docker-compose.override.yaml']) {
      expect(fs.existsSync(path.join(ROOT, name))).toBe(false);
    }
  });
});

describe('Dockerfile', () => {
  const stage = finalStage(readDockerfile());
  const at = (keyword: string): number[] =>
    stage.flatMap((i, n) => (i.keyword === keyword ? [n] : []));

  it('runs the app as a user that is not root', () => {
    const users = at('USER');
    const cmd = at('CMD');
    expect(users.length).toBeGreaterThan(0);
    expect(cmd).toHaveLength(1);
    const last = users.filter((n) => n < cmd[0]).pop();
    expect(last).toBeDefined();
    const user = stage[last!].args.split(':')[0];
    expect(['root', '0', '']).not.toContain(user);
  });

  it('checks its health on /health/ready', () => {
    const command = healthcheckCommand(stage);
    expect(command).not.toBeNull();
    expect(command!.join(' ')).toContain('/health/ready');
  });

  it('runs each maintenance command from the compiled CLI its source builds', () => {
    const scripts = imageScripts(stage);
    expect(Object.keys(scripts).sort()).toEqual(['rebuild', 'token', 'verify-billing']);
    for (const [name, script] of Object.entries(scripts)) {
      expect(script).toBe(`node dist/apps/control-plane/src/cli/${name}.js`);
      expect(fs.existsSync(path.join(ROOT, `apps/control-plane/src/cli/${name}.ts`))).toBe(true);
    }
  });

  it('enters through docker/entrypoint.sh, which it copies into the image', () => {
    const [entry] = at('ENTRYPOINT').map((n) => JSON.parse(stage[n].args) as string[]);
    expect(entry).toEqual(['/bin/sh', '/app/docker/entrypoint.sh']);
    expect(stage.some((i) => i.keyword === 'COPY' && i.args.includes('docker/entrypoint.sh'))).toBe(
      true,
    );
    expect(fs.existsSync(path.join(ROOT, 'docker/entrypoint.sh'))).toBe(true);
  });
});

describe('.dockerignore', () => {
  const ignored = fs
    .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim());

  it('keeps secrets and the host’s builds out of the build context', () => {
    for (const entry of ['.env', '.git', 'node_modules', 'dist', 'data']) {
      expect(ignored).toContain(entry);
    }
  });
});
