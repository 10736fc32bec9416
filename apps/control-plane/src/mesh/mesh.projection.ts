import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { assertNever } from '@fleet/kernel';
import { MeshEvent, MeshStatus, meshCodec } from './mesh.events';

export const MESH_REQUESTS = 'mesh_requests';

export type MeshRequestDoc = {
  _id: string;
  _rev: number;
  meshRequestId: string;
  fromClusterId: string;
  toClusterId: string;
  /** Both ends, so one filter finds a cluster's requests from either side. */
  clusterIds: string[];
  status: MeshStatus;
  requestedBy: string;
  history: Array<{ status: MeshStatus; at: string; by: string; reason: string | null }>;
  createdAt: string;
  updatedAt: string;
};

/** The request as API.md shows it, from the document before (null for the first event). */
export const projectMesh = (
  doc: MeshRequestDoc | null,
  event: MeshEvent,
  revision: number,
): MeshRequestDoc | null => {
  switch (event.type) {
    case 'MeshRequested': {
      const { meshRequestId, fromClusterId, toClusterId, requestedBy, at } = event.data;
      return {
        _id: meshRequestId,
        _rev: revision,
        meshRequestId,
        fromClusterId,
        toClusterId,
        clusterIds: [fromClusterId, toClusterId],
        status: 'pending',
        requestedBy,
        history: [{ status: 'pending', at, by: requestedBy, reason: null }],
        createdAt: at,
        updatedAt: at,
      };
    }
    case 'MeshRequestMoved': {
      if (!doc) return null;
      const { to, by, reason, at } = event.data;
      return {
        ...doc,
        _rev: revision,
        status: to,
        history: [...doc.history, { status: to, at, by, reason }],
        updatedAt: at,
      };
    }
    default:
      return assertNever(event, 'mesh event');
  }
};

export const meshProjection: Projection = {
  name: 'mesh-requests',
  collections: [
    {
      name: MESH_REQUESTS,
      // GET /v1/mesh-requests?clusterId=&status=, newest first; the CIDR rule's live links.
      indexes: [
        { createdAt: -1, _id: 1 },
        { clusterIds: 1, createdAt: -1, _id: 1 },
        { status: 1, createdAt: -1, _id: 1 },
      ],
    },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('mesh-')) return;
    const event = meshCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('mesh-'.length);
    const doc = await writer.get<MeshRequestDoc>(MESH_REQUESTS, id);
    if (doc && stored.revision <= doc._rev) return;
    const next = projectMesh(doc, event, stored.revision);
    if (next) writer.upsert(MESH_REQUESTS, next);
  },
};
