import { decodeJwt, jwtVerify } from 'jose';
import { parse } from 'yaml';
import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { Caller, Role } from '../platform/auth/caller';
import { TokenService } from '../platform/auth/token-service';
import {
  SimulatedCredentialIssuer,
  clusterCredentialKey,
  kubeAudience,
} from '../provisioner/simulated-credential-issuer';
import { kubeconfigDecider } from './kubeconfig.decider';
import { kubeAccessOf, renderKubeconfig } from './kubeconfig.render';

const SECRET = 'unit-secret-0123456789abcdef0123456789';
const as = (...roles: Role[]): Caller => ({ sub: 'kim', roles, clusters: [] });
const NOW = new Date('2026-12-07T10:00:00Z');

describe('a kubeconfig', () => {
  it('gives each standing its access: admin and owners administer, editors edit, the rest read', () => {
    expect(kubeAccessOf(as('admin'), null)).toEqual({ role: 'admin', access: 'admin' });
    expect(kubeAccessOf(as('user'), 'owner')).toEqual({ role: 'owner', access: 'admin' });
    expect(kubeAccessOf(as('user'), 'editor')).toEqual({ role: 'editor', access: 'edit' });
    expect(kubeAccessOf(as('user'), 'viewer')).toEqual({ role: 'viewer', access: 'view' });
    expect(kubeAccessOf(as('auditor'), null)).toEqual({ role: 'auditor', access: 'view' });
    expect(kubeAccessOf(as('auditor', 'user'), 'editor')).toEqual({
      role: 'editor',
      access: 'edit',
    });
    expect(kubeAccessOf(as('user'), null)).toBeNull();
  });

  it('renders as YAML naming the server, the CA, the user and the context', () => {
    const text = renderKubeconfig({
      clusterId: 'c1',
      server: 'https://c1.example:6443',
      caData: 'Q0E=',
      sub: 'kim@example.com',
      token: 'tok',
    });
    expect(parse(text)).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c1',
          cluster: { server: 'https://c1.example:6443', 'certificate-authority-data': 'Q0E=' },
        },
      ],
      users: [{ name: 'kim@example.com@c1', user: { token: 'tok' } }],
      contexts: [
        { name: 'kim@example.com@c1', context: { cluster: 'c1', user: 'kim@example.com@c1' } },
      ],
      'current-context': 'kim@example.com@c1',
      preferences: {},
    });
  });

  it('records every issue: nothing refuses it, the credential was already handed out', () => {
    const data = {
      clusterId: 'c1',
      sub: 'kim',
      role: 'viewer' as const,
      access: 'view' as const,
      expiresAt: 'T2',
      at: 'T1',
    };
    deciderSpec(kubeconfigDecider)
      .given([{ type: 'KubeconfigIssued', data }])
      .when({ type: 'RecordKubeconfigIssued', data })
      .then([{ type: 'KubeconfigIssued', data }]);
  });
});

describe('the simulated credential', () => {
  const issuer = new SimulatedCredentialIssuer(SECRET);
  const issue = (clusterId = 'c1') =>
    issuer.issueCredential({
      requestId: 'r1',
      clusterId,
      sub: 'kim',
      access: 'edit',
      ttlSec: 600,
      now: NOW,
    });

  it('names the cluster, subject and access, and expires after its ttl', async () => {
    const { token, expiresAt } = await issue();
    expect(expiresAt).toBe('2026-12-07T10:10:00.000Z');
    expect(decodeJwt(token)).toMatchObject({
      sub: 'kim',
      cluster: 'c1',
      access: 'edit',
      aud: kubeAudience('c1'),
      exp: Date.parse(expiresAt) / 1000,
    });
    const key = clusterCredentialKey(SECRET, 'c1');
    await expect(
      jwtVerify(token, key, { audience: kubeAudience('c1'), currentDate: NOW }),
    ).resolves.toBeDefined();
  });

  it('is never a control-plane token, nor another cluster’s credential', async () => {
    const { token } = await issue();
    await expect(new TokenService(SECRET).verify(token)).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    await expect(
      jwtVerify(token, clusterCredentialKey(SECRET, 'c2'), { currentDate: NOW }),
    ).rejects.toThrow();
  });
});
