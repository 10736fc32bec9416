import request from 'supertest';
import { eventually } from './reports';

type Headers = Record<string, string>;

/** A listed Kubernetes version when the app lists them, else one the create body accepts. */
export const k8sVersion = async (url: string, who: Headers): Promise<string> => {
  const res = await request(url).get('/v1/kubernetes-versions').set(who);
  if (res.status !== 200) return '1.30';
  const items = res.body.items as Array<{ version: string; default: boolean }>;
  return (items.find((v) => v.default) ?? items[0]).version;
};

/**
 * A cluster created through the API and brought to `running`: by the provisioner when one
 * carries it, else by posting its lifecycle steps as a provisioner would.
 */
export const runningCluster = async (
  url: string,
  admin: Headers,
  body: { name: string; podCidr: string; serviceCidr: string } & Record<string, unknown>,
  who: Headers = admin,
): Promise<string> => {
  const created = await request(url)
    .post('/v1/clusters')
    .set(who)
    .send({ k8sVersion: await k8sVersion(url, admin), ...body });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const id = created.body.clusterId as string;
  const next: Record<string, string> = {
    requested: 'provisioning',
    provisioning: 'bootstrapping',
    bootstrapping: 'running',
  };
  await eventually(async () => {
    const { status } = (await request(url).get(`/v1/clusters/${id}`).set(admin)).body;
    if (status === 'running') return true;
    if (next[status]) {
      await request(url)
        .post(`/v1/clusters/${id}/transitions`)
        .set(admin)
        .send({ to: next[status] });
    }
    return false;
  }, 20_000);
  return id;
};
