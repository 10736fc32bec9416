import { NodeEvent, evolveNode, initialNodeState, nodeCodec } from './node.events';

const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:00:15.000Z';
const overdueData = {
  nodeId: 'n1',
  clusterId: 'c1',
  hostname: 'gpu-a-01',
  desired: true,
  observed: false,
  since: T0,
  at: T1,
};

describe('node events as stored', () => {
  it('stores a cordon gone unsynced as NodeCordonSyncWentOverdue.v1', () => {
    expect(nodeCodec.storedType({ type: 'NodeCordonSyncWentOverdue', data: overdueData })).toBe(
      'NodeCordonSyncWentOverdue.v1',
    );
  });

  describe('when an event was stored under the old name NodeCordonSyncOverdue.v1', () => {
    it('reads it as NodeCordonSyncWentOverdue with the same data', () => {
      expect(nodeCodec.decode('NodeCordonSyncOverdue.v1', overdueData)).toEqual({
        type: 'NodeCordonSyncWentOverdue',
        data: overdueData,
      });
    });

    it('folds it into the node as the flag of that change', () => {
      const stored: Array<[string, unknown]> = [
        [
          'NodeRegistered.v1',
          {
            nodeId: 'n1',
            clusterId: 'c1',
            hostname: 'gpu-a-01',
            role: 'gpu',
            mode: 'shared',
            labels: {},
            capacity: { cpu: 8, memoryGiB: 64, diskGiB: 100 },
            gpus: [],
            kubeletReady: true,
            unschedulable: false,
            observedAt: T0,
            registeredAt: T0,
          },
        ],
        ['NodeCordoned.v1', { nodeId: 'n1', reason: null, at: T0 }],
        ['NodeCordonSyncOverdue.v1', overdueData],
      ];
      const state = stored
        .map(([type, data]) => nodeCodec.decode(type, data) as NodeEvent)
        .reduce(evolveNode, initialNodeState());
      expect(state).toMatchObject({
        status: 'online',
        cordon: { desired: true, since: T0, overdue: true },
      });
    });

    it('is among the stored names that read as the new type', () => {
      expect(nodeCodec.storedTypesOf('NodeCordonSyncWentOverdue').sort()).toEqual([
        'NodeCordonSyncOverdue.v1',
        'NodeCordonSyncWentOverdue.v1',
      ]);
    });
  });
});
