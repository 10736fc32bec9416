import request from 'supertest';

type Headers = Record<string, string>;

/** The steps a new cluster takes to `running` (API.md, v1.1). */
const TO_RUNNING = ['provisioning', 'bootstrapping', 'running'] as const;

/** A listed Kubernetes version when the app lists them (the default), else one create accepts. */
export const k8sVersion = async (url: string, who: Headers): Promise<string> => {
  const res = await request(url).get('/v1/kubernetes-versions').set(who);
  if (res.status !== 200) return '1.30';
  const items = res.body.items as Array<{ version: string; default: boolean }>;
  return (items.find((v) => v.default) ?? items[0]).version;
};

/**
 * Brings a cluster to `running` for specs that need one taking pool changes and sessions: each
 * step it has not reached yet is posted as a transition, as a provisioner would report it. A
 * provisioner moving it on its own meanwhile is fine (its step is then already there, 409).
 */
export const untilRunning = async (
  url: string,
  admin: Headers,
  clusterId: string,
  ms = 15_000,
): Promise<void> => {
  const until = Date.now() + ms;
  for (;;) {
    const { status } = (await request(url).get(`/v1/clusters/${clusterId}`).set(admin)).body as {
      status: string;
    };
    if (status === 'running') return;
    if (Date.now() > until) throw new Error(`cluster ${clusterId} stayed ${status}`);
    const at = TO_RUNNING.indexOf(status as (typeof TO_RUNNING)[number]);
    const next = status === 'requested' ? TO_RUNNING[0] : TO_RUNNING[at + 1];
    if (!next) throw new Error(`cluster ${clusterId} is ${status}: not on its way to running`);
    await request(url).post(`/v1/clusters/${clusterId}/transitions`).set(admin).send({ to: next });
  }
};

/**
 * POST /v1/clusters (by `who`, admin by default; `k8sVersion` the listed default unless the
 * body names one), then `untilRunning`; answers the cluster id.
 */
export const runningCluster = async (
  url: string,
  admin: Headers,
  body: Record<string, unknown>,
  who: Headers = admin,
): Promise<string> => {
  const res = await request(url)
    .post('/v1/clusters')
    .set(who)
    .send({ k8sVersion: await k8sVersion(url, admin), ...body });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  const clusterId = res.body.clusterId as string;
  await untilRunning(url, admin, clusterId);
  return clusterId;
};
