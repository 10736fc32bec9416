import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { MeshCommand, meshDecider, mayMove } from './mesh.decider';
import { MESH_STATUSES, MeshEvent, MeshStatus } from './mesh.events';

const spec = deciderSpec(meshDecider);
const at = '2026-12-07T10:00:00.000Z';
const id = 'm1';
const requested: MeshEvent = {
  type: 'MeshRequested',
  data: { meshRequestId: id, fromClusterId: 'a', toClusterId: 'b', requestedBy: 'alice', at },
};
const moved = (from: MeshStatus, to: MeshStatus, by = 'bob', reason: string | null = null) =>
  ({
    type: 'MeshRequestMoved',
    data: { meshRequestId: id, from, to, by, reason, at },
  }) as const satisfies MeshEvent;
const actor = { meshRequestId: id, by: 'bob', reason: null, at };
const command = (type: Exclude<MeshCommand['type'], 'OpenMeshRequest'>): MeshCommand =>
  ({ type, data: actor }) as MeshCommand;

/** The events that bring a request to `status` along the shortest path. */
const path: Record<MeshStatus, MeshEvent[]> = {
  pending: [requested],
  approved: [requested, moved('pending', 'approved')],
  connecting: [requested, moved('pending', 'approved'), moved('approved', 'connecting')],
  connected: [
    requested,
    moved('pending', 'approved'),
    moved('approved', 'connecting'),
    moved('connecting', 'connected'),
  ],
  rejected: [requested, moved('pending', 'rejected')],
  cancelling: [requested, moved('pending', 'cancelling')],
  cancelled: [requested, moved('pending', 'cancelling'), moved('cancelling', 'cancelled')],
  disconnecting: [
    requested,
    moved('pending', 'approved'),
    moved('approved', 'connecting'),
    moved('connecting', 'connected'),
    moved('connected', 'disconnecting'),
  ],
  disconnected: [
    requested,
    moved('pending', 'approved'),
    moved('approved', 'connecting'),
    moved('connecting', 'connected'),
    moved('connected', 'disconnecting'),
    moved('disconnecting', 'disconnected'),
  ],
  failed: [
    requested,
    moved('pending', 'approved'),
    moved('approved', 'connecting'),
    moved('connecting', 'failed'),
  ],
};

/** Which command asks for each target state. */
const asking: Record<
  Exclude<MeshStatus, 'pending'>,
  Exclude<MeshCommand['type'], 'OpenMeshRequest'>
> = {
  approved: 'ApproveMeshRequest',
  rejected: 'RejectMeshRequest',
  cancelling: 'CancelMeshRequest',
  disconnecting: 'DisconnectMesh',
  connecting: 'BeginMeshConnect',
  connected: 'MarkMeshConnected',
  cancelled: 'MarkMeshCancelled',
  disconnected: 'MarkMeshDisconnected',
  failed: 'FailMeshStep',
};

/** What a refusal says the command could not do (details.command). */
const VERBS: Record<MeshCommand['type'], string> = {
  OpenMeshRequest: 'be opened',
  ApproveMeshRequest: 'be approved',
  RejectMeshRequest: 'be rejected',
  CancelMeshRequest: 'be cancelled',
  DisconnectMesh: 'be disconnected',
  BeginMeshConnect: 'start connecting',
  MarkMeshConnected: 'become connected',
  MarkMeshCancelled: 'become cancelled',
  MarkMeshDisconnected: 'become disconnected',
  FailMeshStep: 'fail',
};

/** API.md: every allowed move, and nothing else. */
const ALLOWED = new Set([
  'pending>approved',
  'approved>connecting',
  'connecting>connected',
  'pending>rejected',
  'pending>cancelling',
  'approved>cancelling',
  'connecting>cancelling',
  'cancelling>cancelled',
  'connected>disconnecting',
  'disconnecting>disconnected',
  'connecting>failed',
  'disconnecting>failed',
]);

describe('a Cluster Mesh request', () => {
  it('is opened pending by the editor who asked, and opening it again changes nothing', () => {
    spec.given([]).when({ type: 'OpenMeshRequest', data: requested.data }).then([requested]);
    spec.given([requested]).when({ type: 'OpenMeshRequest', data: requested.data }).thenNothing();
    expect(spec.given([requested]).state).toMatchObject({
      status: 'pending',
      requestedBy: 'alice',
    });
  });

  it('refuses every command on a request that does not exist', () => {
    spec.given([]).when(command('ApproveMeshRequest')).thenRefuses('not_found', { id });
  });

  it('walks pending → approved → connecting → connected, recording who and why', () => {
    spec
      .given(path.pending)
      .when({ type: 'ApproveMeshRequest', data: { ...actor, reason: 'ok for the project' } })
      .then([moved('pending', 'approved', 'bob', 'ok for the project')]);
    spec
      .given(path.approved)
      .when(command('BeginMeshConnect'))
      .then([moved('approved', 'connecting')]);
    spec
      .given(path.connecting)
      .when(command('MarkMeshConnected'))
      .then([moved('connecting', 'connected')]);
    expect(spec.given(path.connected).state.status).toBe('connected');
  });

  for (const from of MESH_STATUSES) {
    for (const [to, type] of Object.entries(asking) as Array<[MeshStatus, MeshCommand['type']]>) {
      if (from === to) continue;
      const allowed = ALLOWED.has(`${from}>${to}`);
      const stale = type === 'MarkMeshConnected' && (from === 'cancelling' || from === 'cancelled');
      it(`${allowed ? 'moves' : stale ? 'ignores a late answer' : 'refuses to move'} ${from} → ${to} (${type})`, () => {
        const when = spec.given(path[from]).when(command(type as never));
        if (allowed) when.then([moved(from, to)]);
        else if (stale) when.thenNothing();
        else when.thenRefuses('invalid_transition', { from, command: VERBS[type] });
        expect(mayMove(from, to)).toBe(allowed);
      });
    }
  }

  it('takes a command for the state it is already in as a repeat', () => {
    for (const [to, type] of Object.entries(asking) as Array<[MeshStatus, MeshCommand['type']]>) {
      spec
        .given(path[to])
        .when(command(type as never))
        .thenNothing();
    }
  });

  it('ends in rejected, cancelled, disconnected and failed', () => {
    for (const end of ['rejected', 'cancelled', 'disconnected', 'failed'] as const) {
      for (const type of Object.values(asking)) {
        if (asking[end] === type) continue;
        if (end === 'cancelled' && type === 'MarkMeshConnected') continue; // a late answer
        spec.given(path[end]).when(command(type)).thenRefuses('invalid_transition');
      }
    }
  });
});
