import { Aggregate } from '@fleet/cqrs';
import { Decider, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { MeshEvent, MeshStatus, meshCodec } from './mesh.events';

type Actor = { meshRequestId: string; by: string; reason: string | null; at: string };

/**
 * People's commands (open, approve, reject, cancel, disconnect) and the mesh operation's
 * (begin, the provisioner's answers). Who may send which is the route's business (the cluster roles).
 */
export type MeshCommand =
  | {
      type: 'OpenMeshRequest';
      data: {
        meshRequestId: string;
        fromClusterId: string;
        toClusterId: string;
        requestedBy: string;
        at: string;
      };
    }
  | { type: 'ApproveMeshRequest'; data: Actor }
  | { type: 'RejectMeshRequest'; data: Actor }
  | { type: 'CancelMeshRequest'; data: Actor }
  | { type: 'DisconnectMesh'; data: Actor }
  /** approved → connecting: the connect operation asked the provisioner. */
  | { type: 'BeginMeshConnect'; data: Actor }
  /** The provisioner's answers: each names the step it ends. */
  | { type: 'MarkMeshConnected'; data: Actor }
  | { type: 'MarkMeshCancelled'; data: Actor }
  | { type: 'MarkMeshDisconnected'; data: Actor }
  /** The provisioner failed to connect or to disconnect. */
  | { type: 'FailMeshStep'; data: Actor };

export type MeshRequestFacts = {
  readonly meshRequestId: string;
  readonly fromClusterId: string;
  readonly toClusterId: string;
  readonly requestedBy: string;
};

export type MeshState =
  { readonly status: 'absent' } | ({ readonly status: MeshStatus } & MeshRequestFacts);

/** Every move API.md allows; anything else is 409 invalid_transition. */
const MOVES: Readonly<Record<MeshStatus, readonly MeshStatus[]>> = {
  pending: ['approved', 'rejected', 'cancelling'],
  approved: ['connecting', 'cancelling'],
  connecting: ['connected', 'cancelling', 'failed'],
  connected: ['disconnecting'],
  rejected: [],
  cancelling: ['cancelled'],
  cancelled: [],
  disconnecting: ['disconnected', 'failed'],
  disconnected: [],
  failed: [],
};

export const mayMove = (from: MeshStatus, to: MeshStatus): boolean => MOVES[from].includes(to);

type Existing = Extract<MeshState, { meshRequestId: string }>;

const existing = (state: MeshState, id: string): Existing => {
  if (state.status === 'absent') throw notFound('mesh request', id);
  return state;
};

/** The move `command` asks for, as its verb names it in a refusal. */
const move = (state: MeshState, data: Actor, to: MeshStatus, verb: string): MeshEvent[] => {
  const request = existing(state, data.meshRequestId);
  if (to === request.status) return []; // asked twice: already there
  if (!mayMove(request.status, to)) {
    throw invalidTransition('mesh request', request.status, verb);
  }
  const { meshRequestId, by, reason, at } = data;
  return [
    {
      type: 'MeshRequestMoved',
      data: { meshRequestId, from: request.status, to, by, reason, at },
    },
  ];
};

export const decideMesh = (command: MeshCommand, state: MeshState): MeshEvent[] => {
  switch (command.type) {
    case 'OpenMeshRequest':
      // The id derives from the command (Idempotency-Key): a repeat opens nothing new.
      if (state.status !== 'absent') return [];
      return [{ type: 'MeshRequested', data: command.data }];
    case 'ApproveMeshRequest':
      return move(state, command.data, 'approved', 'be approved');
    case 'RejectMeshRequest':
      return move(state, command.data, 'rejected', 'be rejected');
    case 'CancelMeshRequest':
      return move(state, command.data, 'cancelling', 'be cancelled');
    case 'DisconnectMesh':
      return move(state, command.data, 'disconnecting', 'be disconnected');
    case 'BeginMeshConnect':
      return move(state, command.data, 'connecting', 'start connecting');
    case 'MarkMeshConnected': {
      // Connected while a cancel is under way (or done): the cancel goes on, the answer is stale.
      const { status } = existing(state, command.data.meshRequestId);
      if (status === 'cancelling' || status === 'cancelled') return [];
      return move(state, command.data, 'connected', 'become connected');
    }
    case 'MarkMeshCancelled':
      return move(state, command.data, 'cancelled', 'become cancelled');
    case 'MarkMeshDisconnected':
      return move(state, command.data, 'disconnected', 'become disconnected');
    case 'FailMeshStep':
      return move(state, command.data, 'failed', 'fail');
    default:
      return assertNever(command, 'mesh command');
  }
};

export const evolveMesh = (state: MeshState, event: MeshEvent): MeshState => {
  switch (event.type) {
    case 'MeshRequested': {
      const { at: _at, ...facts } = event.data;
      return { status: 'pending', ...facts };
    }
    case 'MeshRequestMoved':
      return { ...existing(state, event.data.meshRequestId), status: event.data.to };
    default:
      return assertNever(event, 'mesh event');
  }
};

export const meshDecider: Decider<MeshCommand, MeshEvent, MeshState> = {
  decide: decideMesh,
  evolve: evolveMesh,
  initialState: () => ({ status: 'absent' }),
};

export const meshAggregate: Aggregate<MeshCommand, MeshEvent, MeshState> = {
  // Stryker disable next-line StringLiteral: the state cache's key; any name apart from other aggregates' serves
  name: 'mesh request',
  decider: meshDecider,
  codec: meshCodec,
};
