import { EventCodec } from '@fleet/kernel';

/** API.md's ten states of a Cluster Mesh request. */
export const MESH_STATUSES = [
  'pending',
  'approved',
  'connecting',
  'connected',
  'rejected',
  'cancelling',
  'cancelled',
  'disconnecting',
  'disconnected',
  'failed',
] as const;
export type MeshStatus = (typeof MESH_STATUSES)[number];

/** The states in which a request holds its pair: a second one is 409 mesh_exists. */
export const LIVE_MESH_STATUSES: readonly MeshStatus[] = [
  'pending',
  'approved',
  'connecting',
  'connected',
  'cancelling',
  'disconnecting',
];

/** The states whose clusters count as meshed for the CIDR rule (API.md). */
export const MESHED_STATUSES: readonly MeshStatus[] = [
  'pending',
  'approved',
  'connecting',
  'connected',
];

export const meshStreamId = (meshRequestId: string): string => `mesh-${meshRequestId}`;

/** Who moved the request and why: each move is a line of the request's `history`. */
export type MeshMove = {
  meshRequestId: string;
  from: MeshStatus;
  to: MeshStatus;
  /** The caller's sub, or `system` for the operation's own moves. */
  by: string;
  reason: string | null;
  at: string;
};

export type MeshEvent =
  | {
      type: 'MeshRequested';
      data: {
        meshRequestId: string;
        fromClusterId: string;
        toClusterId: string;
        requestedBy: string;
        at: string;
      };
    }
  | { type: 'MeshRequestMoved'; data: MeshMove };

export const meshCodec = new EventCodec<MeshEvent>({ MeshRequested: 1, MeshRequestMoved: 1 });
