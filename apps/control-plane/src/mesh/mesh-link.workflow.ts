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
  /** The link's operation (connect_mesh, disconnect_mesh), opened once (again harmlessly). */
  | { type: 'OpenMeshOperation'; data: { meshRequestId: string; action: LinkAction } }
  /** Its end: succeeded (`error` null) or failed; nothing for one never opened or ended. */
  | {
      type: 'EndMeshOperation';
      data: { meshRequestId: string; action: LinkAction; error: string | null };
    }
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

const open = (meshRequestId: string, action: LinkAction): MeshLinkOutput => ({
  type: 'OpenMeshOperation',
  data: { meshRequestId, action },
});
const end = (meshRequestId: string, action: LinkAction, error: string | null): MeshLinkOutput => ({
  type: 'EndMeshOperation',
  data: { meshRequestId, action, error },
});

/** What the request needs next in `status`, whichever input woke the process. */
const next = (status: MeshStatus, meshRequestId: string, at: string): MeshLinkOutput[] => {
  const ask = (action: LinkAction): MeshLinkOutput => ({
    type: 'AskMeshLink',
    data: { meshRequestId, action },
  });
  switch (status) {
    case 'approved':
      return [
        open(meshRequestId, 'connect'),
        { type: 'BeginMeshConnect', data: { meshRequestId, at, reason: null } },
      ];
    case 'connecting':
      return [open(meshRequestId, 'connect'), ask('connect')];
    case 'cancelling':
      // A connect under way ends with the cancel; the cancel's disconnect has no operation.
      return [end(meshRequestId, 'connect', 'cancelled'), ask('disconnect')];
    case 'disconnecting':
      return [open(meshRequestId, 'disconnect'), ask('disconnect')];
    default:
      return [];
  }
};

const answer = (
  input: Extract<MeshLinkInput, { type: 'MeshLinkAnswered' }>['data'],
  status: MeshStatus,
): MeshLinkOutput[] => {
  const { meshRequestId, action, failure, at } = input;
  // An answer to a call the request no longer waits for (a connect overtaken by a cancel).
  if (WAITS[status] !== action) return [];
  // A cancel cannot fail (API.md): the repair asks its disconnect again.
  if (status === 'cancelling') {
    if (failure !== null) return [];
    return [{ type: 'MarkMeshCancelled', data: { meshRequestId, at, reason: null } }];
  }
  // The operation ends first: a crash between the two leaves the request in flight, and the
  // repair's run ends the operation again (a no-op) and moves the request.
  if (failure !== null) {
    return [
      end(meshRequestId, action, failure),
      { type: 'FailMeshStep', data: { meshRequestId, at, reason: failure } },
    ];
  }
  const done = { meshRequestId, at, reason: null };
  return [
    end(meshRequestId, action, null),
    status === 'connecting'
      ? { type: 'MarkMeshConnected', data: done }
      : { type: 'MarkMeshDisconnected', data: done },
  ];
};

/**
 * Carries an approved request to its link and a cancel or disconnect to its end, through the
 * provisioner's mesh calls: approved → a connect_mesh operation and BeginMeshConnect;
 * connecting → ask connect; disconnecting → a disconnect_mesh operation and ask disconnect;
 * cancelling → the connect's operation ended, ask disconnect; each answer → the operation's
 * end, then the request's.
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
