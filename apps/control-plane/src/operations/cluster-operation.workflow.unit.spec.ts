import { OperationOutput, OperationSnapshot, operationWorkflow } from './operation.workflow';
import {
  T0,
  again,
  at,
  complete,
  done,
  fail,
  given,
  opOf,
  requested,
  spec,
  start,
  started,
  stepDue,
  succeed,
} from './testing/operation-workflow.fixtures';

const minute = (n: number) => `2026-12-02T10:0${n}:00.000Z`;
const move = (from: string | null, to: string, n: number) => ({ from, to, at: minute(n) });
const ask = (action: 'create' | 'upgrade' | 'repair' | 'delete'): OperationOutput => ({
  type: 'AskProvisioner',
  data: { action },
});
const cluster = (
  type: 'create_cluster' | 'upgrade_cluster' | 'repair_cluster' | 'delete_cluster',
) => requested(type, { poolId: null, fromSize: null, desiredSize: null });

describe('the operation workflow, cluster operations', () => {
  describe('create, upgrade and repair', () => {
    it('ask the provisioner first, once the cluster is in its read model', () => {
      spec
        .givenState({ ...operationWorkflow.initialState(), op: opOf([cluster('create_cluster')]) })
        .when(stepDue)
        .then([again(1000)]);
      const history = [move(null, 'requested', 0)];
      for (const [type, action] of [
        ['create_cluster', 'create'],
        ['upgrade_cluster', 'upgrade'],
        ['repair_cluster', 'repair'],
      ] as const) {
        given([cluster(type)], { clusterHistory: history })
          .when(stepDue)
          .then([ask(action), again(0)]);
      }
    });

    it('then follow the lifecycle the provisioner reports', () => {
      given([cluster('create_cluster')], {
        clusterHistory: [move('requested', 'provisioning', 1)],
        asked: new Set(['cluster create']),
      })
        .when(stepDue)
        .then([start('provisioning', minute(1)), again(1000)]);
    });

    it('ask again after a restart (nothing asked in this process yet), where the lifecycle stands', () => {
      // Steps recorded before the crash; the new process has asked nothing.
      const before = [cluster('create_cluster'), started('provisioning')];
      given(before, { clusterHistory: [move('requested', 'provisioning', 1)] })
        .when(stepDue)
        .then([ask('create'), again(0)]);
      given(before, {
        clusterHistory: [move('requested', 'provisioning', 1), move('provisioning', 'running', 2)],
        asked: new Set(['cluster create']),
      })
        .when(stepDue)
        .then([complete('provisioning', null, minute(2)), succeed(minute(2))]);
    });

    it('fail when a step the provisioner reports fails (a repair waits for its retry)', () => {
      given([cluster('create_cluster')], {
        clusterHistory: [
          move('provisioning', 'bootstrapping', 1),
          move('bootstrapping', 'failed', 2),
        ],
        asked: new Set(['cluster create']),
      })
        .when(stepDue)
        .then([
          start('bootstrapping', minute(1)),
          fail('cluster failed during bootstrapping', minute(2)),
        ]);
    });
  });

  it('a repair too ends failed once the cluster is being deleted', () => {
    given([cluster('repair_cluster'), started('repair')], {
      clusterHistory: [move('failed', 'deleting', 1)],
      asked: new Set(['cluster repair']),
    })
      .when(stepDue)
      .then([fail('cluster is being deleted', minute(1))]);
  });

  describe('a create with pools', () => {
    const create = requested('create_cluster', {
      poolId: null,
      clusterPools: [
        { poolId: 'p1', hostnames: ['a-1', 'a-2'] },
        { poolId: 'p2', hostnames: ['b-1'] },
      ],
    });
    const ran = [move('bootstrapping', 'running', 2)];
    const asked = new Set(['cluster create']);

    it('waits once running until every node it asked for registered in its pool', () => {
      given([create], { clusterHistory: ran, asked, registered: new Set(['a-1', 'b-1']) })
        .when(stepDue)
        .then([start('await_nodes', minute(2)), again(250)]);
    });

    it('then succeeds', () => {
      given([create, started('await_nodes')], {
        clusterHistory: ran,
        asked,
        registered: new Set(['a-1', 'a-2', 'b-1']),
      })
        .when(stepDue)
        .then([complete('await_nodes', '3 node(s) registered in their pools'), succeed()]);
    });
  });

  describe('delete', () => {
    const del = cluster('delete_cluster');
    const history = [move('running', 'deleting', 0)];
    const seen = (extra: Partial<OperationSnapshot> = {}) => ({
      clusterHistory: history,
      clusterNodes: [],
      clusterPools: ['p1', 'p2'],
      liveMeshes: 0,
      ...extra,
    });
    /** Its meshes are down: the first step done. */
    const meshesDown = [del, started('disconnect_meshes'), done('disconnect_meshes')];
    const node = (nodeId: string, online: boolean, sessions = 0) => ({
      nodeId,
      hostname: `h-${nodeId}`,
      poolId: 'p1',
      online,
      sessions,
    });

    it('waits for its nodes and pools to be read', () => {
      given([del], { clusterHistory: history })
        .when(stepDue)
        .then([again(1000)]);
    });

    it('first waits until none of its meshes is live (the mesh slice takes them down)', () => {
      given([del], seen({ liveMeshes: 2 }))
        .when(stepDue)
        .then([start('disconnect_meshes'), again(0)]);
      given([del, started('disconnect_meshes')], seen({ liveMeshes: 1 }))
        .when(stepDue)
        .then([again(1000)]);
      given([del, started('disconnect_meshes')], seen())
        .when(stepDue)
        .then([complete('disconnect_meshes', 'no live mesh'), again(0)]);
    });

    it('starts removing the nodes, asking the provisioner once', () => {
      given(meshesDown, seen())
        .when(stepDue)
        .then([start('remove_nodes'), again(0)]);
      given([...meshesDown, started('remove_nodes')], seen({ clusterNodes: [node('n1', true)] }))
        .when(stepDue)
        .then([ask('delete'), again(0)]);
    });

    it('deletes each node once offline and empty, and waits for the others', () => {
      const asked = new Set(['cluster delete']);
      const nodes = [node('n1', false), node('n2', true), node('n3', false, 1)];
      given([...meshesDown, started('remove_nodes')], seen({ clusterNodes: nodes, asked }))
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'n1', at } }, again(250)]);
      given(
        [...meshesDown, started('remove_nodes')],
        seen({ clusterNodes: [node('n1', false)], asked }),
      )
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'n1', at } }, again(0)]);
      given([...meshesDown, started('remove_nodes')], seen({ asked }))
        .when(stepDue)
        .then([complete('remove_nodes', 'every node removed'), again(0)]);
    });

    it('asks again after a restart while nodes remain', () => {
      given([...meshesDown, started('remove_nodes')], seen({ clusterNodes: [node('n1', true)] }))
        .when(stepDue)
        .then([ask('delete'), again(0)]);
    });

    it('then marks its pools deleted and the cluster deleted, and succeeds', () => {
      given([...meshesDown, started('remove_nodes'), done('remove_nodes')], seen())
        .when(stepDue)
        .then([
          start('delete_pools'),
          { type: 'MarkClusterPoolsDeleted', data: { poolIds: ['p1', 'p2'], at } },
          complete('delete_pools', '2 pool(s) deleted'),
          { type: 'MarkClusterDeleted', data: { at } },
          succeed(),
        ]);
    });

    it('after its end does nothing more', () => {
      const ended = [
        del,
        { type: 'OperationSucceeded' as const, data: { operationId: 'o1', at: T0 } },
      ];
      given(ended, seen()).when(stepDue).then([]);
    });
  });
});
