import { Workflow, assertNever } from '@fleet/kernel';
import { MeshState } from './mesh.decider';
import { MeshStatus } from './mesh.events';

export type LinkAction = 'connect' | 'disconnect';

/** What reaches the link process: a move from the log, the provisioner's answer, a repair. */
export type MeshLinkInput =
  | {
      type: 'MeshRequestMoved';
      data: { meshRequestId: string; to: MeshStatus; eventId: string; at: string };
    }
  | {
      type: 'MeshLinkAnswered';
      data: {
        meshRequestId: string;
        action: LinkAction;
        /** Null when the provisioner did it, else why it could not. */
        failure: string | null;
        at: string;
      };
    }
  /** At start and now and then: whatever is in flight is asked again (calls are idempotent). */
  | { type: 'MeshLinkRepairDue'; data: { meshRequestId: string; at: string } };

type Step = { meshRequestId: string; at: string; reason: string | null };

export type MeshLinkOutput =
  | { type: 'BeginMeshConnect'; data: Step }
  | { type: 'AskMeshLink'; data: { meshRequestId: string; action: LinkAction } }
  | { type: 'MarkMeshConnected'; data: Step }
  | { type: 'MarkMeshCancelled'; data: Step }
  | { type: 'MarkMeshDisconnected'; data: Step }
  | { type: 'FailMeshStep'; data: Step };

/** The provisioner call each working state waits for. */
const WAITS: Partial<Record<MeshStatus, LinkAction>> = {
  connecting: 'connect',
  cancelling: 'disconnect',
  disconnecting: 'disconnect',
};

/** What the request needs next in `status`, whichever input woke the process. */
const next = (status: MeshStatus, meshRequestId: string, at: string): MeshLinkOutput[] => {
  if (status === 'approved') {
    return [{ type: 'BeginMeshConnect', data: { meshRequestId, at, reason: null } }];
  }
  const action = WAITS[status];
  return action ? [{ type: 'AskMeshLink', data: { meshRequestId, action } }] : [];
};

const answer = (
  input: Extract<MeshLinkInput, { type: 'MeshLinkAnswered' }>['data'],
  status: MeshStatus,
): MeshLinkOutput[] => {
  const { meshRequestId, action, failure, at } = input;
  // An answer to a call the request no longer waits for (a connect overtaken by a cancel).
  if (WAITS[status] !== action) return [];
  if (failure !== null) {
    // A cancel cannot fail (API.md): the repair asks its disconnect again.
    if (status === 'cancelling') return [];
    return [{ type: 'FailMeshStep', data: { meshRequestId, at, reason: failure } }];
  }
  const done = { meshRequestId, at, reason: null };
  if (status === 'connecting') return [{ type: 'MarkMeshConnected', data: done }];
  if (status === 'cancelling') return [{ type: 'MarkMeshCancelled', data: done }];
  return [{ type: 'MarkMeshDisconnected', data: done }];
};

/**
 * Carries an approved request to its link and a cancel or disconnect to its end, through the
 * provisioner's mesh calls: approved → BeginMeshConnect; connecting → ask connect;
 * cancelling and disconnecting → ask disconnect; each answer → the matching end or failed.
 * The state is the request's own stream: every decision reads where the request is now.
 */
export const meshLinkWorkflow: Workflow<MeshLinkInput, MeshLinkOutput, MeshState> = {
  decide: (input, state) => {
    if (state.status === 'absent') return [];
    switch (input.type) {
      case 'MeshRequestMoved':
        // A move read late (the request has moved on since) is the later move's business.
        if (input.data.to !== state.status) return [];
        return next(state.status, input.data.meshRequestId, input.data.at);
      case 'MeshLinkRepairDue':
        return next(state.status, input.data.meshRequestId, input.data.at);
      case 'MeshLinkAnswered':
        return answer(input.data, state.status);
      default:
        return assertNever(input, 'mesh link input');
    }
  },
  evolve: (state) => state,
  initialState: () => ({ status: 'absent' }),
};
