import fs from 'node:fs';
import { decodeJwt } from 'jose';
import request from 'supertest';
import { parse } from 'yaml';
import { startApp, TestApp } from '../support/app';
import { eventually } from '../support/reports';

/** What the simulated provisioner gave the cluster on its way to running. */
let ENDPOINT: string;
let CA: string;

describe('kubeconfig over HTTP', () => {
  let t: TestApp;
  let clusterId: string;
  const output: string[] = [];
  let capture: jest.SpyInstance;
  const as = async (sub: string, roles: Array<'user' | 'admin' | 'auditor'>) => t.auth(sub, roles);
  const kubeconfig = async (who: Record<string, string>, query = '') =>
    request(t.url).get(`/v1/clusters/${clusterId}/kubeconfig${query}`).set(who);

  beforeAll(async () => {
    // Every log line the app writes (pino writes stdout with fs.writeSync), at the finest level.
    const write = fs.writeSync.bind(fs) as (...args: unknown[]) => number;
    capture = jest.spyOn(fs, 'writeSync').mockImplementation(((
      fd: unknown,
      data: unknown,
      ...rest: unknown[]
    ) => {
      if (fd === 1 || fd === 2) {
        output.push(String(data));
        return Buffer.byteLength(String(data));
      }
      return write(fd, data, ...rest);
    }) as typeof fs.writeSync);
    t = await startApp({ LOG_LEVEL: 'trace' }, { redis: false });
    const owner = await as('kira', ['user']);
    const created = await request(t.url)
      .post('/v1/clusters')
      .set(owner)
      .send({
        name: 'tenant-k',
        k8sVersion: '1.30.4',
        podCidr: '10.244.0.0/16',
        serviceCidr: '10.96.0.0/12',
      })
      .expect(201);
    clusterId = created.body.clusterId;
    await request(t.url)
      .put(`/v1/clusters/${clusterId}/members/vera`)
      .set(owner)
      .send({ role: 'viewer' })
      .expect(200);
    await request(t.url)
      .put(`/v1/clusters/${clusterId}/members/ed`)
      .set(owner)
      .send({ role: 'editor' })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
    capture.mockRestore();
  });

  it('is 409 cluster_not_running before the cluster runs, then names the endpoint the provisioner gave', async () => {
    const early = await kubeconfig(await as('kira', ['user']));
    expect([early.status, early.body.error.code]).toEqual([409, 'cluster_not_running']);
    expect(['requested', 'provisioning', 'bootstrapping']).toContain(
      early.body.error.details.status,
    );
    const running = await eventually(async () => {
      const res = await request(t.url)
        .get(`/v1/clusters/${clusterId}`)
        .set(await as('kira', ['user']));
      return res.body.status === 'running' ? res.body : null;
    }, 20_000);
    expect(running.apiEndpoint).toMatch(/^https:\/\//);
    expect(running.caCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
    ENDPOINT = running.apiEndpoint;
    CA = Buffer.from(running.caCertificate, 'utf8').toString('base64');
  });

  it('hands each caller a YAML kubeconfig for the endpoint, its credential scoped to its role', async () => {
    const cases: Array<[string, Record<string, string>, string, string]> = [
      ['kira', await as('kira', ['user']), 'owner', 'admin'],
      ['ed', await as('ed', ['user']), 'editor', 'edit'],
      ['vera', await as('vera', ['user']), 'viewer', 'view'],
      ['root', await as('root', ['admin']), 'admin', 'admin'],
      ['aud', await as('aud', ['auditor']), 'auditor', 'view'],
    ];
    for (const [sub, who, , access] of cases) {
      const res = await kubeconfig(who, '?ttlSec=600');
      expect({ sub, status: res.status }).toEqual({ sub, status: 200 });
      expect(res.headers['content-type']).toMatch(/^application\/yaml/);
      const config = parse(res.text);
      expect(config.clusters[0]).toEqual({
        name: clusterId,
        cluster: { server: ENDPOINT, 'certificate-authority-data': CA },
      });
      expect(config['current-context']).toBe(`${sub}@${clusterId}`);
      const token = config.users[0].user.token as string;
      const claims = decodeJwt(token);
      expect({ sub: claims.sub, cluster: claims.cluster, access: claims.access }).toEqual({
        sub,
        cluster: clusterId,
        access,
      });
      expect((claims.exp as number) - (claims.iat as number)).toBe(600);
      // The credential is no token of this API.
      const misuse = await request(t.url)
        .get(`/v1/clusters/${clusterId}`)
        .set({ authorization: `Bearer ${token}` });
      expect(misuse.status).toBe(401);
    }
    const recorded = (
      await request(t.url)
        .get(`/v1/streams/kubeconfigs-${clusterId}`)
        .set(await as('root', ['admin']))
    ).body.events.map(
      (e: { type: string; data: { sub: string; role: string; access: string } }) => [
        e.type,
        e.data.sub,
        e.data.role,
        e.data.access,
      ],
    );
    expect(recorded).toEqual(
      cases.map(([sub, , role, access]) => ['KubeconfigIssued.v1', sub, role, access]),
    );
  });

  it('keeps ttlSec within 1..86400, defaulting to an hour', async () => {
    const owner = await as('kira', ['user']);
    for (const bad of ['0', '86401', 'x', '1.5']) {
      const res = await kubeconfig(owner, `?ttlSec=${bad}`);
      expect([bad, res.status, res.body.error.details.fields[0].field]).toEqual([
        bad,
        400,
        'ttlSec',
      ]);
    }
    const token = parse((await kubeconfig(owner)).text).users[0].user.token as string;
    const claims = decodeJwt(token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect((await kubeconfig(await as('nobody', ['user']))).status).toBe(404);
  });

  it('writes no credential to the event log nor to any log line', async () => {
    const owner = await as('kira', ['user']);
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      tokens.push(parse((await kubeconfig(owner)).text).users[0].user.token as string);
    }
    const log = JSON.stringify(
      (
        await request(t.url)
          .get('/v1/events?limit=1000')
          .set(await as('aud', ['auditor']))
      ).body,
    );
    expect(log).toContain('KubeconfigIssued');
    const lines = output.join('');
    // The capture sees the app's lines: the kubeconfig route's own request lines among them.
    expect(lines).toContain('/v1/clusters/:clusterId/kubeconfig');
    for (const token of tokens) {
      const signature = token.split('.')[2];
      expect(log).not.toContain(signature);
      expect(lines).not.toContain(signature);
    }
  });
});
