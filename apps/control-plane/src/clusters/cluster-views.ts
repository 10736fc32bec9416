import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ClusterDoc, reportingNormally } from './clusters.projection';
import { roleOn } from './members/members.projection';
import { PoolSummariesOf } from './pool-summaries-of.query';
import { BackupPoliciesOf } from './backup-policies-of.query';

/** A document as the API shows it: members are their own route's, so left out here. */
const documentView = (doc: ClusterDoc, caller: string | null) => {
  const { _id: _i, _rev: _r, members: _m, memberSubs: _s, ...view } = doc;
  const myRole = caller === null ? null : roleOn(doc, caller);
  // Documents written before the guard (or the endpoint) was shown (a MongoDB not yet rebuilt).
  // Its pools' summaries and its backup policy are added by ClusterViews (other slices' answers).
  return {
    ...view,
    apiEndpoint: view.apiEndpoint ?? null,
    caCertificate: view.caCertificate ?? null,
    reports: view.reports ?? reportingNormally(),
    myRole,
  };
};

/**
 * Cluster documents as the API shows them: the pools' summaries and the backup policy belong
 * to slices above this one, so they are asked for on the QueryBus, once per page of clusters
 * (not once per cluster).
 */
@Injectable()
export class ClusterViews {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  async of(docs: readonly ClusterDoc[], caller: string | null) {
    if (docs.length === 0) return [];
    const [pools, policies] = await Promise.all([
      this.queries.execute(new PoolSummariesOf([...new Set(docs.flatMap((d) => d.pools))])),
      this.queries.execute(new BackupPoliciesOf(docs.map((d) => d.clusterId))),
    ]);
    return docs.map((doc) => ({
      ...documentView(doc, caller),
      // The cluster's own list says which pools it has (in the order they joined it).
      pools: doc.pools.flatMap((poolId) => {
        const pool = pools.get(poolId);
        return pool ? [pool] : [];
      }),
      velero: policies.get(doc.clusterId) ?? null,
    }));
  }

  async one(doc: ClusterDoc, caller: string | null) {
    const [view] = await this.of([doc], caller);
    return view;
  }
}
