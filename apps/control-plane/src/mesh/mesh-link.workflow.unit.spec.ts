import { MeshState } from './mesh.decider';
import { MeshStatus } from './mesh.events';
import { LinkAction, MeshLinkInput, meshLinkWorkflow } from './mesh-link.workflow';

const at = '2026-12-07T10:00:00.000Z';
const id = 'm1';
const given = (status: MeshStatus | 'absent'): MeshState =>
  status === 'absent'
    ? { status }
    : { status, meshRequestId: id, fromClusterId: 'a', toClusterId: 'b', requestedBy: 'alice' };
const moved = (to: MeshStatus): MeshLinkInput => ({
  type: 'MeshRequestMoved',
  data: { meshRequestId: id, to, eventId: 'e1', at },
});
const answered = (action: LinkAction, failure: string | null = null): MeshLinkInput => ({
  type: 'MeshLinkAnswered',
  data: { meshRequestId: id, action, failure, at },
});
const repair: MeshLinkInput = { type: 'MeshLinkRepairDue', data: { meshRequestId: id, at } };
const step = (reason: string | null = null) => ({ meshRequestId: id, at, reason });
const open = (action: LinkAction) => ({
  type: 'OpenMeshOperation',
  data: { meshRequestId: id, action },
});
const end = (action: LinkAction, error: string | null = null) => ({
  type: 'EndMeshOperation',
  data: { meshRequestId: id, action, error },
});
const ask = (action: LinkAction) => ({ type: 'AskMeshLink', data: { meshRequestId: id, action } });
const decide = (input: MeshLinkInput, status: MeshStatus | 'absent') =>
  meshLinkWorkflow.decide(input, given(status));

describe('the mesh link process', () => {
  describe('when a request is approved', () => {
    it('opens its connect_mesh operation and starts connecting', () => {
      expect(decide(moved('approved'), 'approved')).toEqual([
        open('connect'),
        { type: 'BeginMeshConnect', data: step() },
      ]);
    });
    it('does nothing when the request has moved on since (cancelled, say)', () => {
      expect(decide(moved('approved'), 'cancelling')).toEqual([]);
    });
  });

  it('asks the provisioner to connect once connecting, to disconnect once cancelling or disconnecting', () => {
    expect(decide(moved('connecting'), 'connecting')).toEqual([open('connect'), ask('connect')]);
    // A cancel ends the connect's operation; a disconnect has one of its own.
    expect(decide(moved('cancelling'), 'cancelling')).toEqual([
      end('connect', 'cancelled'),
      ask('disconnect'),
    ]);
    expect(decide(moved('disconnecting'), 'disconnecting')).toEqual([
      open('disconnect'),
      ask('disconnect'),
    ]);
  });

  it('ignores moves it has no part in', () => {
    for (const status of [
      'pending',
      'connected',
      'rejected',
      'cancelled',
      'disconnected',
      'failed',
    ] as const) {
      expect(decide(moved(status), status)).toEqual([]);
    }
    expect(decide(moved('approved'), 'absent')).toEqual([]);
  });

  describe('when the provisioner answers', () => {
    it('ends the operation, then the request, as the request waits for it', () => {
      expect(decide(answered('connect'), 'connecting')).toEqual([
        end('connect'),
        { type: 'MarkMeshConnected', data: step() },
      ]);
      expect(decide(answered('disconnect'), 'cancelling')).toEqual([
        { type: 'MarkMeshCancelled', data: step() },
      ]);
      expect(decide(answered('disconnect'), 'disconnecting')).toEqual([
        end('disconnect'),
        { type: 'MarkMeshDisconnected', data: step() },
      ]);
    });
    it('fails a connect or a disconnect, and its operation, with the provisioner’s reason', () => {
      expect(decide(answered('connect', 'no route'), 'connecting')).toEqual([
        end('connect', 'no route'),
        { type: 'FailMeshStep', data: step('no route') },
      ]);
      expect(decide(answered('disconnect', 'timeout'), 'disconnecting')).toEqual([
        end('disconnect', 'timeout'),
        { type: 'FailMeshStep', data: step('timeout') },
      ]);
    });
    it('leaves a cancel whose disconnect failed cancelling, for the repair to ask again', () => {
      expect(decide(answered('disconnect', 'timeout'), 'cancelling')).toEqual([]);
    });
    it('ignores an answer the request no longer waits for', () => {
      expect(decide(answered('connect'), 'cancelling')).toEqual([]);
      expect(decide(answered('connect'), 'connected')).toEqual([]);
      expect(decide(answered('disconnect'), 'connecting')).toEqual([]);
      expect(decide(answered('connect', 'late failure'), 'cancelled')).toEqual([]);
    });
  });

  it('asks again, on repair, for whatever is in flight', () => {
    expect(decide(repair, 'approved')).toEqual([
      open('connect'),
      { type: 'BeginMeshConnect', data: step() },
    ]);
    expect(decide(repair, 'connecting')).toEqual([open('connect'), ask('connect')]);
    expect(decide(repair, 'cancelling')).toEqual([end('connect', 'cancelled'), ask('disconnect')]);
    expect(decide(repair, 'connected')).toEqual([]);
    expect(decide(repair, 'pending')).toEqual([]);
  });
});
