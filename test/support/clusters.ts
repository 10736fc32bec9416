import request from 'supertest';

/** The steps a new cluster takes to `running` (API.md, v1.1). */
const TO_RUNNING = ['provisioning', 'bootstrapping', 'running'] as const;

/**
 * Brings a cluster to `running` for specs that need one taking pool changes and sessions: each
 * step it has not reached yet is posted as a transition, as a provisioner would report it. A
 * provisioner moving it on its own meanwhile is fine (its step is then already there, 409).
 */
export const untilRunning = async (
  url: string,
  admin: Record<string, string>,
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

/** POST /v1/clusters, then `untilRunning`; answers the cluster id. */
export const runningCluster = async (
  url: string,
  admin: Record<string, string>,
  body: Record<string, unknown>,
): Promise<string> => {
  const res = await request(url).post('/v1/clusters').set(admin).send(body).expect(201);
  const clusterId = res.body.clusterId as string;
  await untilRunning(url, admin, clusterId);
  return clusterId;
};
