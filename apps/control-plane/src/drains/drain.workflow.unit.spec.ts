import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { workflowSpec } from '../../../../libs/kernel/testing/workflow-spec';
import {
  DrainEvent,
  DrainInput,
  DrainState,
  drainDecider,
  drainWorkflow,
  nextDrainStep,
} from './drain.workflow';

const spec = deciderSpec(drainDecider);
const T = '2026-12-02T10:00:00.000Z';
const started: DrainEvent = {
  type: 'DrainStarted',
  data: { drainId: 'd1', nodeId: 'n1', mode: 'relocate', correlationId: 'c', at: T },
};
const forced: DrainEvent = { ...started, data: { ...started.data, mode: 'force' } } as DrainEvent;
const begun = (sessionId: string): DrainEvent => ({
  type: 'DrainRelocationStarted',
  data: { drainId: 'd1', sessionId, at: T },
});
const finished = (
  sessionId: string,
  outcome: 'relocated' | 'queued' | 'gone' = 'relocated',
): DrainEvent => ({
  type: 'DrainRelocationFinished',
  data: {
    drainId: 'd1',
    sessionId,
    outcome,
    toNodeId: outcome === 'relocated' ? 'n2' : null,
    at: T,
  },
});
/** A force drain's termination of s1, begun. */
const terminating: DrainEvent = {
  type: 'DrainTerminationStarted',
  data: { drainId: 'd1', sessionId: 's1', at: T },
};
const state = (events: DrainEvent[]): DrainState =>
  events.reduce(drainDecider.evolve, drainDecider.initialState());
const online = (sessionsOnNode: string[], cordoned = true) => ({
  status: 'online' as const,
  cordoned,
  sessionsOnNode,
});

describe('the drain workflow', () => {
  describe('bookkeeping', () => {
    it('starts once', () => {
      spec.given().when({ type: 'StartDrain', data: started.data }).then([started]);
      spec.given([started]).when({ type: 'StartDrain', data: started.data }).thenNothing();
    });

    it('begins a relocation once, and not beyond the parallelism', () => {
      spec
        .given([started])
        .when({ type: 'BeginRelocation', data: { sessionId: 's1', parallelism: 2, at: T } })
        .then([begun('s1')]);
      spec
        .given([started, begun('s1')])
        .when({ type: 'BeginRelocation', data: { sessionId: 's1', parallelism: 2, at: T } })
        .thenNothing();
      spec
        .given([started, begun('s1'), begun('s2')])
        .when({ type: 'BeginRelocation', data: { sessionId: 's3', parallelism: 2, at: T } })
        .thenNothing();
    });

    it('never relocates a session twice', () => {
      spec
        .given([started, begun('s1'), finished('s1')])
        .when({ type: 'BeginRelocation', data: { sessionId: 's1', parallelism: 4, at: T } })
        .thenNothing();
      spec
        .given([started, begun('s1'), finished('s1')])
        .when({
          type: 'FinishRelocation',
          data: { sessionId: 's1', outcome: 'queued', toNodeId: null, at: T },
        })
        .thenNothing();
    });

    it('does not relocate in force mode', () => {
      spec
        .given([forced])
        .when({ type: 'BeginRelocation', data: { sessionId: 's1', parallelism: 4, at: T } })
        .thenNothing();
    });

    it('records a force termination once', () => {
      const e: DrainEvent = {
        type: 'DrainSessionTerminated',
        data: { drainId: 'd1', sessionId: 's1', at: T },
      };
      spec
        .given([forced])
        .when({ type: 'RecordForceTermination', data: { sessionId: 's1', at: T } })
        .then([e]);
      spec
        .given([forced, e])
        .when({ type: 'RecordForceTermination', data: { sessionId: 's1', at: T } })
        .thenNothing();
    });

    it('begins a force termination once, only in force mode, and the record ends it', () => {
      const begin = { type: 'BeginForceTermination', data: { sessionId: 's1', at: T } } as const;
      const recorded: DrainEvent = {
        type: 'DrainSessionTerminated',
        data: { drainId: 'd1', sessionId: 's1', at: T },
      };
      spec.given([forced]).when(begin).then([terminating]);
      spec.given([forced, terminating]).when(begin).thenNothing();
      spec.given([forced, terminating, recorded]).when(begin).thenNothing();
      spec.given([started]).when(begin).thenNothing();
      expect(state([forced, terminating, recorded])).toMatchObject({
        inFlight: [],
        terminated: ['s1'],
      });
    });

    it('lets go of a termination that ended nothing, listing it nowhere', () => {
      const skipped: DrainEvent = {
        type: 'DrainTerminationSkipped',
        data: { drainId: 'd1', sessionId: 's1', at: T },
      };
      const skip = { type: 'SkipForceTermination', data: { sessionId: 's1', at: T } } as const;
      spec.given([forced, terminating]).when(skip).then([skipped]);
      spec.given([forced, terminating, skipped]).when(skip).thenNothing();
      spec.given([forced]).when(skip).thenNothing();
      expect(state([forced, terminating, skipped])).toMatchObject({ inFlight: [], terminated: [] });
      expect(nextDrainStep(state([forced, terminating, skipped]), online([]), 2)).toEqual({
        kind: 'end',
        outcome: 'drained',
      });
    });

    it('ends once', () => {
      const ended: DrainEvent = {
        type: 'DrainEnded',
        data: { drainId: 'd1', nodeId: 'n1', outcome: 'drained', at: T },
      };
      spec
        .given([started])
        .when({ type: 'EndDrain', data: { outcome: 'drained', at: T } })
        .then([ended]);
      spec
        .given([started, ended])
        .when({ type: 'EndDrain', data: { outcome: 'cancelled', at: T } })
        .thenNothing();
    });
  });

  describe('the next step', () => {
    it('relocates up to the parallelism, in a stable order', () => {
      expect(nextDrainStep(state([started]), online(['s1', 's2', 's3']), 2)).toEqual({
        kind: 'relocate',
        resume: [],
        begin: ['s1', 's2'],
      });
    });

    it('finishes relocations begun before a crash first', () => {
      expect(nextDrainStep(state([started, begun('s2')]), online(['s1', 's2', 's3']), 2)).toEqual({
        kind: 'relocate',
        resume: ['s2'],
        begin: ['s1'],
      });
    });

    it('ends, drained, when nothing runs on the node', () => {
      expect(nextDrainStep(state([started, begun('s1'), finished('s1')]), online([]), 2)).toEqual({
        kind: 'end',
        outcome: 'drained',
      });
    });

    it('waits while a relocated session is still being released', () => {
      expect(
        nextDrainStep(state([started, begun('s1'), finished('s1')]), online(['s1']), 2),
      ).toEqual({ kind: 'wait' });
    });

    it('is cancelled by an uncordon', () => {
      expect(nextDrainStep(state([started]), online(['s1'], false), 2)).toEqual({
        kind: 'end',
        outcome: 'cancelled',
      });
    });

    it('ends when the node goes offline (its sessions settle as node_offline)', () => {
      expect(
        nextDrainStep(
          state([started]),
          { status: 'offline', cordoned: true, sessionsOnNode: ['s1'] },
          2,
        ),
      ).toEqual({
        kind: 'end',
        outcome: 'node_offline',
      });
      expect(
        nextDrainStep(state([started]), { status: 'gone', cordoned: false, sessionsOnNode: [] }, 2),
      ).toEqual({
        kind: 'end',
        outcome: 'node_offline',
      });
    });

    it('terminates everything in force mode', () => {
      expect(nextDrainStep(state([forced]), online(['s1', 's2']), 2)).toEqual({
        kind: 'terminate',
        sessionIds: ['s1', 's2'],
      });
      expect(nextDrainStep(state([forced]), online([]), 2)).toEqual({
        kind: 'end',
        outcome: 'drained',
      });
    });

    it('finishes a force termination begun before a crash, even once its session left the node', () => {
      expect(nextDrainStep(state([forced, terminating]), online(['s2']), 2)).toEqual({
        kind: 'terminate',
        sessionIds: ['s1', 's2'],
      });
      expect(nextDrainStep(state([forced, terminating]), online([]), 2)).toEqual({
        kind: 'terminate',
        sessionIds: ['s1'],
      });
    });

    it('does nothing for an ended drain', () => {
      const ended: DrainEvent = {
        type: 'DrainEnded',
        data: { drainId: 'd1', nodeId: 'n1', outcome: 'drained', at: T },
      };
      expect(nextDrainStep(state([started, ended]), online(['s1']), 2)).toEqual({ kind: 'none' });
    });
  });

  describe('a step as a workflow', () => {
    const steps = workflowSpec(drainWorkflow);
    const due: DrainInput = { type: 'DrainStepDue', data: { drainId: 'd1', at: T } };
    const view = (events: DrainEvent[], node = online(['s1', 's2', 's3']), parallelism = 2) =>
      steps.givenState({ drain: state(events), node, parallelism });
    const next = { type: 'ScheduleDrainStep', data: { drainId: 'd1' } } as const;

    it('resumes relocations begun before a crash, begins new ones, then arms the next step', () => {
      view([started, begun('s2')])
        .when(due)
        .then([
          { type: 'RelocateSession', data: { sessionId: 's2', begin: false } },
          { type: 'RelocateSession', data: { sessionId: 's1', begin: true } },
          next,
        ]);
    });

    it('force-terminates every session, then arms the next step', () => {
      view([forced], online(['s1', 's2']))
        .when(due)
        .then([
          { type: 'ForceTerminateSession', data: { sessionId: 's1' } },
          { type: 'ForceTerminateSession', data: { sessionId: 's2' } },
          next,
        ]);
    });

    it('ends the drain, then on its node, at the time of the step, and arms nothing', () => {
      view([started], online(['s1'], false))
        .when(due)
        .then([
          { type: 'EndDrain', data: { outcome: 'cancelled', at: T } },
          {
            type: 'EndDrainOnNode',
            data: { drainId: 'd1', nodeId: 'n1', outcome: 'cancelled', at: T },
          },
        ]);
    });

    it('does nothing while it waits for a release, nor for a drain not running', () => {
      view([started, begun('s1'), finished('s1')], online(['s1']))
        .when(due)
        .thenNothing();
      steps.given().when(due).thenNothing();
      const ended: DrainEvent = {
        type: 'DrainEnded',
        data: { drainId: 'd1', nodeId: 'n1', outcome: 'drained', at: T },
      };
      view([started, ended]).when(due).thenNothing();
    });
  });
});
