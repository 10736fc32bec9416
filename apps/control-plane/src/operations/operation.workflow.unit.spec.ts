import { workflowSpec } from '../../../../libs/kernel/testing/workflow-spec';
import { OperationState, operationDecider } from './operation.decider';
import { OperationEvent, OperationType } from './operation.events';
import {
  ChosenNode,
  OperationInput,
  OperationOutput,
  OperationSnapshot,
  operationWorkflow,
} from './operation.workflow';

const spec = workflowSpec(operationWorkflow);
const T0 = '2026-12-02T10:00:00.000Z';
const at = '2026-12-02T10:01:00.000Z';
const deadlineAt = '2026-12-02T10:30:00.000Z';

const requested = (
  operationType: OperationType,
  target: Partial<Extract<OperationEvent, { type: 'OperationRequested' }>['data']> = {},
): OperationEvent => ({
  type: 'OperationRequested',
  data: {
    operationId: 'o1',
    operationType,
    clusterId: 'c1',
    poolId: 'p1',
    fromSize: 2,
    desiredSize: 2,
    addHostnames: [],
    reason: null,
    deadlineAt,
    at: T0,
    ...target,
  },
});
const started = (name: string): OperationEvent => ({
  type: 'OperationStepStarted',
  data: { operationId: 'o1', name, at: T0 },
});
const done = (name: string): OperationEvent => ({
  type: 'OperationStepCompleted',
  data: { operationId: 'o1', name, detail: null, at: T0 },
});
const chose = (...nodeIds: string[]): OperationEvent => ({
  type: 'OperationNodesChosen',
  data: {
    operationId: 'o1',
    nodes: nodeIds.map((id) => ({ nodeId: id, hostname: `h-${id}` })),
    at: T0,
  },
});
const drained = (nodeId: string): OperationEvent => ({
  type: 'OperationDrainStarted',
  data: { operationId: 'o1', nodeId, drainId: `d-${nodeId}`, at: T0 },
});
const opOf = (events: OperationEvent[]): OperationState =>
  events.reduce(operationDecider.evolve, operationDecider.initialState());

const given = (events: OperationEvent[], seen: Partial<OperationSnapshot> = {}) =>
  spec.givenState({
    ...operationWorkflow.initialState(),
    poolSeen: true,
    ...seen,
    op: opOf(events),
  });
const node = (status: ChosenNode['status'], sessions = 0, poolId: string | null = 'p1') => ({
  status,
  poolId,
  hostname: 'h',
  sessions,
});

const stepDue: OperationInput = { type: 'OperationStepDue', data: { operationId: 'o1', at } };
const again = (delayMs: number): OperationOutput => ({
  type: 'ScheduleOperationStep',
  data: { delayMs },
});
const start = (name: string, when = at): OperationOutput => ({
  type: 'StartOperationStep',
  data: { name, at: when },
});
const complete = (name: string, detail: string | null, when = at): OperationOutput => ({
  type: 'CompleteOperationStep',
  data: { name, detail, at: when },
});
const succeed = (when = at): OperationOutput => ({ type: 'SucceedOperation', data: { at: when } });
const fail = (error: string, when = at): OperationOutput => ({
  type: 'FailOperation',
  data: { error, at: when },
});

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

  describe('scale-in', () => {
    const shrink = requested('scale_node_pool', { fromSize: 3, desiredSize: 1 });
    const members = [
      { nodeId: 'a', hostname: 'h-a', runningSessions: 2, capacity: { cpu: 8, memoryGiB: 32 } },
      { nodeId: 'b', hostname: 'h-b', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
      { nodeId: 'c', hostname: 'h-c', runningSessions: 1, capacity: { cpu: 8, memoryGiB: 32 } },
    ];

    it('chooses the idlest nodes, as many as are too many', () => {
      given([shrink], { members })
        .when(stepDue)
        .then([
          start('choose_nodes'),
          {
            type: 'ChooseOperationNodes',
            data: {
              nodes: [
                { nodeId: 'b', hostname: 'h-b' },
                { nodeId: 'c', hostname: 'h-c' },
              ],
              at,
            },
          },
          complete('choose_nodes', 'h-b, h-c'),
          again(0),
        ]);
      expect(
        given([shrink, started('choose_nodes')], { members: [] })
          .when(stepDue)
          .thenOutputs(),
      ).toContainEqual(complete('choose_nodes', 'none'));
    });

    const chosen = [shrink, started('choose_nodes'), done('choose_nodes'), chose('b', 'c')];

    it('drains each chosen node once, and looks again while drains run', () => {
      const nodes = { b: node('online', 1), c: node('online') };
      given(chosen, { nodes })
        .when(stepDue)
        .then([
          start('drain_nodes'),
          { type: 'DrainNode', data: { nodeId: 'b' } },
          { type: 'DrainNode', data: { nodeId: 'c' } },
          again(250),
        ]);
      given([...chosen, started('drain_nodes'), drained('b')], {
        nodes,
        drains: { 'd-b': 'running' },
      })
        .when(stepDue)
        .then([{ type: 'DrainNode', data: { nodeId: 'c' } }, again(250)]);
    });

    it('needs no drain for a node gone, or offline and empty', () => {
      given([...chosen, started('drain_nodes')], { nodes: { b: node('gone'), c: node('offline') } })
        .when(stepDue)
        .then([complete('drain_nodes', '2 node(s) drained'), again(0)]);
    });

    it('completes the drains once every one completed', () => {
      const all = [...chosen, started('drain_nodes'), drained('b'), drained('c')];
      const nodes = { b: node('online'), c: node('online') };
      given(all, { nodes, drains: { 'd-b': 'completed' } })
        .when(stepDue)
        .then([again(250)]);
      given(all, { nodes, drains: { 'd-b': 'completed', 'd-c': 'completed' } })
        .when(stepDue)
        .then([complete('drain_nodes', '2 node(s) drained'), again(0)]);
    });

    it('fails naming a chosen node an admin moved to another pool, after draining those before it', () => {
      given([...chosen, started('drain_nodes')], {
        nodes: { b: node('online'), c: { ...node('online', 0, 'p2'), hostname: 'h-c' } },
      })
        .when(stepDue)
        .then([
          { type: 'DrainNode', data: { nodeId: 'b' } },
          fail('node_in_use: node h-c was moved to another pool since it was chosen: not drained'),
        ]);
    });

    const removing = [...chosen, started('drain_nodes'), done('drain_nodes')];

    it('asks for the removal once, then looks again at once', () => {
      const nodes = { b: node('online'), c: node('online') };
      given(removing, { nodes })
        .when(stepDue)
        .then([
          start('remove_nodes'),
          {
            type: 'RemoveNodes',
            data: {
              key: 'all',
              nodes: [
                { nodeId: 'b', hostname: 'h-b' },
                { nodeId: 'c', hostname: 'h-c' },
              ],
            },
          },
          again(0),
        ]);
    });

    it('deletes each node once offline and empty, waiting for the others', () => {
      const asked = new Set(['removal all']);
      const removal = [...removing, started('remove_nodes')];
      given(removal, { asked, nodes: { b: node('online'), c: node('offline', 1) } })
        .when(stepDue)
        .then([again(250)]);
      given(removal, { asked, nodes: { b: node('offline'), c: node('online') } })
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'b', at } }, again(250)]);
      // Deleted now: the next look finds them gone (or one refused, busy) and completes.
      given(removal, { asked, nodes: { b: node('offline'), c: node('gone') } })
        .when(stepDue)
        .then([{ type: 'DeleteNode', data: { nodeId: 'b', at } }, again(0)]);
      given(removal, { asked, nodes: { b: node('gone'), c: node('gone') } })
        .when(stepDue)
        .then([complete('remove_nodes', '2 node(s) removed'), again(0)]);
    });

    it('succeeds once its nodes are removed', () => {
      given([...removing, started('remove_nodes'), done('remove_nodes')])
        .when(stepDue)
        .then([succeed()]);
    });
  });

  describe('deletion', () => {
    const deletion = requested('delete_node_pool');

    it('chooses every member', () => {
      const members = [
        { nodeId: 'a', hostname: 'h-a', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
        { nodeId: 'b', hostname: 'h-b', runningSessions: 0, capacity: { cpu: 8, memoryGiB: 32 } },
      ];
      expect(given([deletion], { members }).when(stepDue).thenOutputs()).toContainEqual(
        complete('choose_nodes', 'h-b, h-a'),
      );
    });

    it('marks the pool deleted once its nodes are removed, and succeeds', () => {
      const removed = [
        deletion,
        chose('a'),
        started('drain_nodes'),
        done('drain_nodes'),
        started('remove_nodes'),
        done('remove_nodes'),
      ];
      given(removed)
        .when(stepDue)
        .then([
          start('delete_pool'),
          { type: 'MarkPoolDeleted', data: { at } },
          complete('delete_pool', null),
          succeed(),
        ]);
    });
  });

  describe('resize', () => {
    const to = { cpu: 16, memoryGiB: 64 };
    const resize = requested('resize_node_pool', { resizeTo: to, addHostnames: ['n-1', 'n-2'] });
    const member = (id: string, cpu: number, runningSessions = 0) => ({
      nodeId: id,
      hostname: `h-${id}`,
      runningSessions,
      capacity: { cpu, memoryGiB: 64 },
    });

    it('fails without a target shape', () => {
      given([requested('resize_node_pool')])
        .when(stepDue)
        .then([fail('resize without a target shape')]);
    });

    it('chooses the nodes of another shape, one per replacement', () => {
      const members = [member('a', 8, 1), member('b', 16), member('c', 8), member('d', 4)];
      expect(given([resize], { members }).when(stepDue).thenOutputs()).toEqual([
        start('choose_nodes'),
        {
          type: 'ChooseOperationNodes',
          data: {
            nodes: [
              { nodeId: 'd', hostname: 'h-d' },
              { nodeId: 'c', hostname: 'h-c' },
            ],
            at,
          },
        },
        complete('choose_nodes', 'h-d, h-c'),
        again(0),
      ]);
    });

    const chosen = [resize, chose('a', 'b')];

    it('adds a node of the new shape once, and waits for it in the pool', () => {
      given(chosen)
        .when(stepDue)
        .then([start('add_node n-1'), again(0)]);
      const adding = [...chosen, started('add_node n-1')];
      given(adding)
        .when(stepDue)
        .then([{ type: 'CreateNodes', data: { hostnames: ['n-1'], shape: to } }, again(0)]);
      const asked = new Set(['create n-1']);
      given(adding, { asked })
        .when(stepDue)
        .then([again(250)]);
      given(adding, { asked, registered: new Set(['n-1']) })
        .when(stepDue)
        .then([complete('add_node n-1', 'n-1 registered with 16 vCPU / 64 GiB'), again(0)]);
    });

    it('then drains the old node, and removes it', () => {
      const added = [...chosen, started('add_node n-1'), done('add_node n-1')];
      given(added)
        .when(stepDue)
        .then([start('drain_node h-a'), again(0)]);
      given([...added, started('drain_node h-a')], { nodes: { a: node('online', 1) } })
        .when(stepDue)
        .then([{ type: 'DrainNode', data: { nodeId: 'a' } }, again(250)]);
      const drainedA = [...added, started('drain_node h-a'), drained('a')];
      given(drainedA, { nodes: { a: node('online') }, drains: { 'd-a': 'completed' } })
        .when(stepDue)
        .then([complete('drain_node h-a', null), again(0)]);
      const removing = [...drainedA, done('drain_node h-a')];
      given(removing)
        .when(stepDue)
        .then([start('remove_node h-a'), again(0)]);
      given([...removing, started('remove_node h-a')], { nodes: { a: node('online') } })
        .when(stepDue)
        .then([
          { type: 'RemoveNodes', data: { key: 'a', nodes: [{ nodeId: 'a', hostname: 'h-a' }] } },
          again(0),
        ]);
      given([...removing, started('remove_node h-a')], {
        asked: new Set(['removal a']),
        nodes: { a: node('gone') },
      })
        .when(stepDue)
        .then([complete('remove_node h-a', null), again(0)]);
      // The next replacement follows.
      given([...removing, started('remove_node h-a'), done('remove_node h-a')])
        .when(stepDue)
        .then([start('add_node n-2'), again(0)]);
    });

    it('changes the pool shape once every node is replaced, and succeeds', () => {
      const replaced = [chose('a'), 'n-1'].flatMap((x) =>
        typeof x === 'string'
          ? [`add_node ${x}`, 'drain_node h-a', 'remove_node h-a'].flatMap((s) => [
              started(s),
              done(s),
            ])
          : [x],
      );
      given([requested('resize_node_pool', { resizeTo: to, addHostnames: ['n-1'] }), ...replaced])
        .when(stepDue)
        .then([
          start('update_spec'),
          { type: 'ChangePoolSpec', data: { cpu: 16, memoryGiB: 64, at } },
          complete('update_spec', '16 vCPU / 64 GiB'),
          succeed(),
        ]);
    });
  });

  describe('cluster operations', () => {
    const create = requested('create_cluster', { poolId: null });
    const minute = (n: number) => `2026-12-02T10:0${n}:00.000Z`;
    const move = (from: string | null, to: string, n: number) => ({ from, to, at: minute(n) });

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
      given([create], { clusterHistory: history })
        .when(stepDue)
        .then([
          start('provisioning', minute(1)),
          complete('provisioning', null, minute(2)),
          start('bootstrapping', minute(2)),
          again(1000),
        ]);
      given([create, started('provisioning'), started('bootstrapping')], {
        clusterHistory: [...history, move('bootstrapping', 'running', 3)],
      })
        .when(stepDue)
        .then([
          complete('provisioning', null, minute(2)),
          complete('bootstrapping', null, minute(3)),
          succeed(minute(3)),
        ]);
    });

    it('fails when the cluster fails or is being deleted', () => {
      given([create], { clusterHistory: [move('requested', 'failed', 1)] })
        .when(stepDue)
        .then([fail('cluster failed during requested', minute(1))]);
      given([create], { clusterHistory: [move(null, 'failed', 1)] })
        .when(stepDue)
        .then([fail('cluster failed during an unknown step', minute(1))]);
      given([create], { clusterHistory: [move('running', 'deleting', 1)] })
        .when(stepDue)
        .then([fail('cluster is being deleted', minute(1))]);
    });

    it('repairs in one step from the request, through failed retries, until running', () => {
      const repair = requested('repair_cluster', { poolId: null });
      given([repair], {
        clusterHistory: [move('failed', 'repairing', 1), move('repairing', 'failed', 2)],
      })
        .when(stepDue)
        .then([start('repair', T0), again(1000)]);
      given([repair, started('repair')], {
        clusterHistory: [move('failed', 'repairing', 1), move('repairing', 'running', 3)],
      })
        .when(stepDue)
        .then([complete('repair', null, minute(3)), succeed(minute(3))]);
    });
  });
});
