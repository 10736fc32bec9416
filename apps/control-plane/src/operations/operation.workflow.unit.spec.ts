import { OperationEvent } from './operation.events';
import { OperationInput, OperationOutput, operationWorkflow } from './operation.workflow';
import {
  again,
  at,
  complete,
  deadlineAt,
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
  T0,
} from './testing/operation-workflow.fixtures';

describe('the operation workflow', () => {
  describe('whatever comes', () => {
    const finished: OperationEvent = {
      type: 'OperationSucceeded',
      data: { operationId: 'o1', at: T0 },
    };
    const deadline: OperationInput = {
      type: 'OperationDeadlineDue',
      data: { operationId: 'o1', at },
    };
    const refused: OperationInput = {
      type: 'OperationStepRefused',
      data: { operationId: 'o1', error: 'node_in_use: busy', at },
    };

    it('does nothing for an operation that does not exist or has finished', () => {
      for (const input of [stepDue, deadline, refused]) {
        given([]).when(input).thenNothing();
        given([requested('scale_node_pool'), finished])
          .when(input)
          .thenNothing();
      }
    });

    it('looks again shortly while the pool is not in its read model yet', () => {
      spec
        .givenState({
          ...operationWorkflow.initialState(),
          op: opOf([requested('scale_node_pool')]),
        })
        .when(stepDue)
        .then([again(250)]);
    });

    it('fails with the refusal a step met (a node in use, a drain refused)', () => {
      given([requested('scale_node_pool'), started('drain_nodes')])
        .when(refused)
        .then([fail('node_in_use: busy')]);
    });

    it('does not take a type it does not know for a pool', () => {
      given([requested('upgrade_cluster')])
        .when(stepDue)
        .then([fail('upgrade_cluster is not supported yet')]);
    });
  });

  describe('its deadline', () => {
    it('times it out at the deadline, and arms nothing more', () => {
      given([requested('scale_node_pool'), started('request_nodes')])
        .when({ type: 'OperationDeadlineDue', data: { operationId: 'o1', at: deadlineAt } })
        .then([{ type: 'TimeOutOperation', data: { at: deadlineAt } }]);
    });

    it('fired early, sends the timeout (stale: the decider ignores it) and arms the deadline again', () => {
      given([requested('scale_node_pool')])
        .when({ type: 'OperationDeadlineDue', data: { operationId: 'o1', at } })
        .then([
          { type: 'TimeOutOperation', data: { at } },
          { type: 'ArmOperation', data: { operationId: 'o1', deadlineAt } },
        ]);
    });
  });

  describe('its end', () => {
    const ended = (succeeded: boolean): OperationInput => ({
      type: 'OperationEnded',
      data: { operationId: 'o1', succeeded, at, eventId: 'e1', correlationId: 'corr' },
    });
    const release: OperationOutput[] = [
      { type: 'EndPoolOperation', data: { operationId: 'o1', at } },
      { type: 'CancelOperationDeadline', data: { operationId: 'o1' } },
    ];

    it('frees the pool and drops the deadline', () => {
      given([requested('scale_node_pool')])
        .when(ended(true))
        .then(release);
      given([requested('delete_node_pool')])
        .when(ended(true))
        .then(release);
    });

    it('gives a pool whose deletion failed or timed out back to its cluster first', () => {
      given([requested('delete_node_pool')])
        .when(ended(false))
        .then([
          { type: 'AddPoolToCluster', data: { clusterId: 'c1', poolId: 'p1', at } },
          ...release,
        ]);
    });

    it('has nothing to free for a cluster operation', () => {
      given([requested('create_cluster', { poolId: null })])
        .when(ended(false))
        .thenNothing();
    });
  });

  describe('scale-out', () => {
    const scale = requested('scale_node_pool', { desiredSize: 4, addHostnames: ['a-1', 'a-2'] });

    it('asks the provisioner for the new nodes once its step started', () => {
      given([scale])
        .when(stepDue)
        .then([start('request_nodes'), again(0)]);
      given([scale, started('request_nodes')])
        .when(stepDue)
        .then([
          { type: 'CreateNodes', data: { hostnames: ['a-1', 'a-2'], shape: null } },
          complete('request_nodes', '2 node(s) requested'),
          again(0),
        ]);
    });

    it('then waits for every new node to register in the pool, and succeeds', () => {
      const asked = [scale, started('request_nodes'), done('request_nodes')];
      given(asked)
        .when(stepDue)
        .then([start('await_registration'), again(0)]);
      const waiting = [...asked, started('await_registration')];
      given(waiting, { registered: new Set(['a-1']) })
        .when(stepDue)
        .then([again(250)]);
      given(waiting, { registered: new Set(['a-1', 'a-2']) })
        .when(stepDue)
        .then([complete('await_registration', '2 node(s) registered in the pool'), succeed()]);
    });
  });

  it('succeeds at once when the pool already has the size asked', () => {
    const same = requested('scale_node_pool', { desiredSize: 2 });
    given([same])
      .when(stepDue)
      .then([
        start('nothing_to_do'),
        complete('nothing_to_do', 'pool already has 2 node(s)'),
        succeed(),
      ]);
    given([same, started('nothing_to_do')])
      .when(stepDue)
      .then([complete('nothing_to_do', 'pool already has 2 node(s)'), succeed()]);
  });

  describe('cluster operations', () => {
    const create = requested('create_cluster', { poolId: null });
    const minute = (n: number) => `2026-12-02T10:0${n}:00.000Z`;
    const move = (from: string | null, to: string, n: number) => ({ from, to, at: minute(n) });
    /** The provisioner was asked already (cluster-operation.workflow.unit.spec.ts: the asking). */
    const asked = new Set(['cluster create']);

    it('looks again in a while until the cluster is in its read model', () => {
      spec
        .givenState({ ...operationWorkflow.initialState(), op: opOf([create]) })
        .when(stepDue)
        .then([again(1000)]);
    });

    it('follows the lifecycle: a step per working status, success once running', () => {
      const history = [
        { from: null, to: 'requested', at: '2026-12-02T09:59:00.000Z' }, // before the request
        move('requested', 'provisioning', 1),
        move('provisioning', 'bootstrapping', 2),
      ];
      given([create], { clusterHistory: history, asked })
        .when(stepDue)
        .then([
          start('provisioning', minute(1)),
          complete('provisioning', null, minute(2)),
          start('bootstrapping', minute(2)),
          again(1000),
        ]);
      given([create, started('provisioning'), started('bootstrapping')], {
        clusterHistory: [...history, move('bootstrapping', 'running', 3)],
        asked,
      })
        .when(stepDue)
        .then([
          complete('provisioning', null, minute(2)),
          complete('bootstrapping', null, minute(3)),
          succeed(minute(3)),
        ]);
    });

    it('fails when the cluster fails or is being deleted', () => {
      given([create], { clusterHistory: [move('requested', 'failed', 1)], asked })
        .when(stepDue)
        .then([fail('cluster failed during requested', minute(1))]);
      given([create], { clusterHistory: [move(null, 'failed', 1)], asked })
        .when(stepDue)
        .then([fail('cluster failed during an unknown step', minute(1))]);
      given([create], { clusterHistory: [move('running', 'deleting', 1)], asked })
        .when(stepDue)
        .then([fail('cluster is being deleted', minute(1))]);
    });

    it('repairs in one step from the request, through failed retries, until running', () => {
      const repair = requested('repair_cluster', { poolId: null });
      const asked = new Set(['cluster repair']);
      given([repair], {
        clusterHistory: [move('failed', 'repairing', 1), move('repairing', 'failed', 2)],
        asked,
      })
        .when(stepDue)
        .then([start('repair', T0), again(1000)]);
      given([repair, started('repair')], {
        clusterHistory: [move('failed', 'repairing', 1), move('repairing', 'running', 3)],
        asked,
      })
        .when(stepDue)
        .then([complete('repair', null, minute(3)), succeed(minute(3))]);
    });
  });
});
