import { CLUSTER_STATUSES } from '../clusters';
import {
  nextSimulatedMove,
  simulatedCaCertificate,
  simulatedEndpoint,
} from './simulated-lifecycle';

const at = (status: (typeof CLUSTER_STATUSES)[number], failedFrom: null | 'bootstrapping' = null) =>
  ({ status, failedFrom }) as const;

describe('the simulated provisioner lifecycle', () => {
  it('walks requested → provisioning → bootstrapping → running, making the nodes on the last step', () => {
    expect(nextSimulatedMove(at('requested'), null)).toEqual({
      from: 'requested',
      to: 'provisioning',
      reason: null,
      bootstraps: false,
    });
    expect(nextSimulatedMove(at('provisioning'), null)).toMatchObject({ to: 'bootstrapping' });
    expect(nextSimulatedMove(at('bootstrapping'), null)).toMatchObject({
      to: 'running',
      bootstraps: true,
    });
  });

  it('ends an upgrade and a repair of a degraded cluster running; retries a failed step', () => {
    expect(nextSimulatedMove(at('upgrading'), null)).toMatchObject({ to: 'running' });
    expect(nextSimulatedMove(at('degraded'), null)).toMatchObject({ to: 'running' });
    expect(nextSimulatedMove(at('failed', 'bootstrapping'), null)).toMatchObject({
      from: 'failed',
      to: 'bootstrapping',
    });
    expect(nextSimulatedMove(at('failed'), null)).toBeNull();
  });

  it('fails the step it is told to, with a reason', () => {
    for (const step of ['provisioning', 'bootstrapping', 'upgrading'] as const) {
      expect(nextSimulatedMove(at(step), step)).toEqual({
        from: step,
        to: 'failed',
        reason: `simulated failure during ${step}`,
        bootstraps: false,
      });
    }
    expect(nextSimulatedMove(at('requested'), 'bootstrapping')).toMatchObject({
      to: 'provisioning',
    });
  });

  it('does nothing with a running, deleting, deleted or unknown cluster', () => {
    for (const status of ['running', 'deleting', 'deleted'] as const)
      expect(nextSimulatedMove(at(status), null)).toBeNull();
    expect(nextSimulatedMove({ status: 'absent', failedFrom: null }, null)).toBeNull();
  });

  it('gives each cluster its endpoint and a PEM-shaped CA', () => {
    expect(simulatedEndpoint('c1')).toBe('https://c1.k8s.sim.local:6443');
    const pem = simulatedCaCertificate('c1');
    expect(pem).toMatch(
      /^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+\n-----END CERTIFICATE-----\n$/,
    );
    expect(simulatedCaCertificate('c2')).not.toBe(pem);
  });
});
