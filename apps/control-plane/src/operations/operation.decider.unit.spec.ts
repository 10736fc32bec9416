import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { operationDecider } from './operation.decider';
import { OperationEvent } from './operation.events';
import { chooseNodesToRemove } from './pool-operation.steps';

const spec = deciderSpec(operationDecider);
const at = '2026-12-02T10:00:00.000Z';
const later = '2026-12-02T10:00:05.000Z';
const deadlineAt = '2026-12-02T10:30:00.000Z';
const request = {
  operationId: 'o1',
  operationType: 'scale_node_pool' as const,
  clusterId: 'c1',
  poolId: 'p1',
  fromSize: 2,
  desiredSize: 5,
  addHostnames: ['a-1', 'a-2', 'a-3'],
  reason: null,
  deadlineAt,
  at,
};
const requested: OperationEvent = { type: 'OperationRequested', data: request };
const stepStarted = (name: string): OperationEvent => ({
  type: 'OperationStepStarted',
  data: { operationId: 'o1', name, at },
});
const stepDone = (name: string): OperationEvent => ({
  type: 'OperationStepCompleted',
  data: { operationId: 'o1', name, detail: null, at: later },
});

describe('operation', () => {
  it('is pending when requested, once', () => {
    spec.given([]).when({ type: 'RequestOperation', data: request }).then([requested]);
    expect(spec.given([requested]).state.status).toBe('pending');
    spec.given([requested]).when({ type: 'RequestOperation', data: request }).thenNothing();
  });

  it('runs from its first step, with named steps and times', () => {
    spec
      .given([requested])
      .when({ type: 'StartOperationStep', data: { name: 'request_nodes', at } })
      .then([stepStarted('request_nodes')]);
    const state = spec.given([
      requested,
      stepStarted('request_nodes'),
      stepDone('request_nodes'),
    ]).state;
    expect(state).toMatchObject({
      status: 'running',
      steps: [{ name: 'request_nodes', status: 'succeeded', startedAt: at, at: later }],
    });
    spec
      .given([requested, stepStarted('request_nodes')])
      .when({ type: 'StartOperationStep', data: { name: 'request_nodes', at } })
      .thenNothing();
  });

  it('succeeds or fails, and then takes no more steps', () => {
    const running = [requested, stepStarted('request_nodes')];
    spec
      .given(running)
      .when({ type: 'SucceedOperation', data: { at: later } })
      .then([{ type: 'OperationSucceeded', data: { operationId: 'o1', at: later } }]);
    const failed: OperationEvent = {
      type: 'OperationFailed',
      data: { operationId: 'o1', error: 'node_busy: …', at: later },
    };
    expect(spec.given([...running, failed]).state).toMatchObject({
      status: 'failed',
      error: 'node_busy: …',
      steps: [{ name: 'request_nodes', status: 'failed' }],
    });
    spec
      .given([...running, failed])
      .when({ type: 'StartOperationStep', data: { name: 'await_registration', at } })
      .thenNothing();
    spec
      .given([...running, failed])
      .when({ type: 'SucceedOperation', data: { at: later } })
      .thenNothing();
  });

  describe('when its deadline passes', () => {
    const running = [
      requested,
      stepStarted('request_nodes'),
      stepDone('request_nodes'),
      stepStarted('await_registration'),
    ];
    it('times out, naming the step it was in', () => {
      const at2 = '2026-12-02T10:30:00.001Z';
      spec
        .given(running)
        .when({ type: 'TimeOutOperation', data: { at: at2 } })
        .then([
          {
            type: 'OperationTimedOut',
            data: { operationId: 'o1', deadlineAt, step: 'await_registration', at: at2 },
          },
        ]);
      const state = spec.given([
        ...running,
        {
          type: 'OperationTimedOut',
          data: { operationId: 'o1', deadlineAt, step: 'await_registration', at: at2 },
        },
      ]).state;
      expect(state).toMatchObject({
        status: 'timeout',
        error: expect.stringContaining('await_registration'),
      });
    });
    it('ignores a deadline job that fires early, and one after it finished', () => {
      spec
        .given(running)
        .when({ type: 'TimeOutOperation', data: { at: later } })
        .thenNothing();
      spec
        .given([...running, { type: 'OperationSucceeded', data: { operationId: 'o1', at: later } }])
        .when({ type: 'TimeOutOperation', data: { at: '2026-12-02T11:00:00.000Z' } })
        .thenNothing();
    });
  });

  it('chooses its nodes once and records each drain once', () => {
    const nodes = [{ nodeId: 'n1', hostname: 'h1' }];
    const chosen: OperationEvent = {
      type: 'OperationNodesChosen',
      data: { operationId: 'o1', nodes, at },
    };
    spec
      .given([requested])
      .when({ type: 'ChooseOperationNodes', data: { nodes, at } })
      .then([chosen]);
    spec
      .given([requested, chosen])
      .when({ type: 'ChooseOperationNodes', data: { nodes: [], at } })
      .thenNothing();
    const drain: OperationEvent = {
      type: 'OperationDrainStarted',
      data: { operationId: 'o1', nodeId: 'n1', drainId: 'd1', at },
    };
    spec
      .given([requested, chosen, drain])
      .when({ type: 'RecordOperationDrain', data: { nodeId: 'n1', drainId: 'd1', at } })
      .thenNothing();
  });

  it('refuses commands on an operation that does not exist', () => {
    spec.given([]).when({ type: 'SucceedOperation', data: { at } }).thenRefuses('not_found');
  });
});

describe('scale-in choice', () => {
  it('takes idle nodes first, then the fewest sessions', () => {
    const nodes = [
      { nodeId: 'a', hostname: 'a', runningSessions: 2 },
      { nodeId: 'b', hostname: 'b', runningSessions: 0 },
      { nodeId: 'c', hostname: 'c', runningSessions: 1 },
      { nodeId: 'd', hostname: 'd', runningSessions: 3 },
    ];
    expect(chooseNodesToRemove(nodes, 2).map((n) => n.nodeId)).toEqual(['b', 'c']);
    expect(chooseNodesToRemove(nodes, 0)).toEqual([]);
    expect(chooseNodesToRemove(nodes, 9)).toHaveLength(4);
  });
});
