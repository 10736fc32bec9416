import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, roleOn } from '../clusters';
import { Caller } from '../platform/auth/caller';
import { READ_MODELS } from '../platform/runtime/tokens';
import { CREDENTIAL_ISSUER, CredentialIssuer } from '../provisioner';
import { kubeconfigAggregate } from './kubeconfig.decider';
import { kubeconfigStreamId } from './kubeconfig.events';
import { kubeAccessOf, renderKubeconfig } from './kubeconfig.render';

/** The states whose API server answers (API.md): others are 409 cluster_not_running. */
const SERVING = new Set(['running', 'upgrading', 'degraded']);

/**
 * What the lifecycle records of a cluster's API server, read defensively: documents of
 * clusters adopted from reports, or written before the lifecycle kept them, have neither.
 */
type ServedCluster = ClusterDoc & {
  apiEndpoint?: string | null;
  caCertificate?: string | null;
};

const notRunning = (clusterId: string, status: string, why: string): DomainError =>
  new DomainError('cluster_not_running', `cluster ${clusterId} ${why}`, 'conflict', {
    clusterId,
    status,
  });

@Injectable()
export class KubeconfigService {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(CREDENTIAL_ISSUER) private readonly issuer: CredentialIssuer,
  ) {}

  /** A kubeconfig for the caller; records who got which access until when, never the token. */
  async issue(clusterId: string, caller: Caller, ttlSec: number, ctx: CommandContext) {
    const doc = await this.readModels.get<ServedCluster & Doc>(CLUSTERS, clusterId);
    if (!doc) throw notFound('cluster', clusterId);
    if (!SERVING.has(doc.status)) throw notRunning(clusterId, doc.status, `is ${doc.status}`);
    const server = doc.apiEndpoint ?? null;
    if (!server) throw notRunning(clusterId, doc.status, 'has no API endpoint known to us');
    const standing = kubeAccessOf(caller, roleOn(doc, caller.sub));
    // The guard let the caller through; without a standing it has none to be issued.
    if (!standing) throw notFound('cluster', clusterId);
    const credential = await this.issuer.issueCredential({
      requestId: uuidFrom(ctx.commandId, 'credential'),
      clusterId,
      sub: caller.sub,
      access: standing.access,
      ttlSec,
      now: ctx.now,
    });
    await this.pipeline.handle(
      kubeconfigAggregate,
      kubeconfigStreamId(clusterId),
      {
        type: 'RecordKubeconfigIssued',
        data: {
          clusterId,
          sub: caller.sub,
          ...standing,
          expiresAt: credential.expiresAt,
          at: ctx.now.toISOString(),
        },
      },
      ctx,
    );
    // A kubeconfig carries the CA's PEM base64-encoded (`certificate-authority-data`).
    const caData = doc.caCertificate
      ? Buffer.from(doc.caCertificate, 'utf8').toString('base64')
      : null;
    return renderKubeconfig({
      clusterId,
      server,
      caData,
      sub: caller.sub,
      token: credential.token,
    });
  }
}
