import { Placement, SessionEvent } from '../sessions';
import {
  BillingLine,
  RECORD_FIELDS,
  recordView,
  segmentsOf,
  toBillingRecord,
} from './billing-line';

const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:10:00.000Z'; // +600 s
const T2 = '2026-12-02T10:20:00.000Z';
const T3 = '2026-12-02T10:25:00.000Z';
const T4 = '2026-12-02T10:45:00.500Z'; // T3 + 1200.5 s

const gpu = (over: Partial<Placement> = {}): Placement => ({
  nodeId: 'n1',
  hostname: 'gpu-a-01',
  gpus: ['GPU-1', 'GPU-2'],
  cpu: 0,
  memoryGiB: 0,
  units: 2,
  gpuModel: 'L40S',
  unitPricePerHour: 3600,
  currency: 'KRW',
  ...over,
});

const cpu: Placement = {
  nodeId: 'n9',
  hostname: 'cpu-b-01',
  gpus: [],
  cpu: 8,
  memoryGiB: 32,
  units: 8,
  gpuModel: null,
  unitPricePerHour: 36,
  currency: 'KRW',
};

const requested = (owner = 'alice'): SessionEvent => ({
  type: 'SessionRequested',
  data: {
    sessionId: 's1',
    owner,
    demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 2 },
    poolId: null,
    requestedAt: T0,
  },
});
const started = (at: string, p = gpu()): SessionEvent => ({
  type: 'SessionStarted',
  data: { sessionId: 's1', ...p, at },
});
const resumed = (at: string, p = gpu()): SessionEvent => ({
  type: 'SessionResumed',
  data: { sessionId: 's1', ...p, at },
});
const paused = (at: string): SessionEvent => ({
  type: 'SessionPaused',
  data: { sessionId: 's1', reason: 'user', drainId: null, at },
});
const resumeRequested = (at: string): SessionEvent => ({
  type: 'SessionResumeRequested',
  data: { sessionId: 's1', displaced: false, drainId: null, at },
});
const terminated = (
  at: string,
  endedAt = at,
  reason: 'user' | 'node_offline' = 'user',
): SessionEvent => ({
  type: 'SessionTerminated',
  data: { sessionId: 's1', reason, endedAt, at },
});

/** given(events).then(lines): billing is a fold, so the spec is the events and what they bill. */
const given = (...events: SessionEvent[]) => ({ lines: segmentsOf(events) });

describe('segmentsOf', () => {
  describe('when a session starts, pauses, resumes elsewhere and terminates', () => {
    const { lines } = given(
      requested(),
      started(T0),
      paused(T1),
      resumeRequested(T2),
      resumed(T3, gpu({ nodeId: 'n2', hostname: 'gpu-a-02', gpus: ['GPU-7'], units: 1 })),
      terminated(T4),
    );

    it('bills exactly two segments', () => {
      expect(lines).toHaveLength(2);
    });

    it('bills the first segment from start to pause, per card', () => {
      expect(lines[0]).toEqual<BillingLine>({
        sessionId: 's1',
        owner: 'alice',
        nodeId: 'n1',
        hostname: 'gpu-a-01',
        gpuUuids: ['GPU-1', 'GPU-2'],
        gpuModel: 'L40S',
        from: T0,
        to: T1,
        seconds: 600,
        unitPricePerHour: 3600,
        amount: 1200, // 600 s × 2 cards × 1/s
        currency: 'KRW',
        units: 2,
      });
    });

    it('bills the second segment from resume to termination on the new placement, rounding half up', () => {
      expect(lines[1]).toMatchObject({
        nodeId: 'n2',
        hostname: 'gpu-a-02',
        gpuUuids: ['GPU-7'],
        from: T3,
        to: T4,
        seconds: 1200.5,
        amount: 1201, // 1200.5 → round half up
        units: 1,
      });
    });

    it('never bills the paused gap', () => {
      const billed = lines.reduce((s, l) => s + l.seconds, 0);
      expect(billed).toBe(600 + 1200.5);
      expect(lines.some((l) => l.from < T3 && l.to > T1)).toBe(false);
    });
  });

  describe('when a paused session is terminated', () => {
    it('adds nothing for the termination', () => {
      const { lines } = given(requested(), started(T0), paused(T1), terminated(T2));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ from: T0, to: T1 });
    });
  });

  describe('when a queued session is terminated', () => {
    it('bills nothing if it never ran', () => {
      expect(given(requested(), terminated(T1)).lines).toEqual([]);
    });

    it('bills nothing for the wait after a resume request', () => {
      const { lines } = given(
        requested(),
        started(T0),
        paused(T1),
        resumeRequested(T2),
        terminated(T3),
      );
      expect(lines.map((l) => [l.from, l.to])).toEqual([[T0, T1]]);
    });
  });

  describe('when its owner pauses a session a drain paused or queued to move it', () => {
    it('bills nothing more: the drain’s pause closed the only segment', () => {
      const { lines } = given(
        requested(),
        started(T0),
        paused(T1),
        paused(T2),
        resumeRequested(T2),
        paused(T3),
        terminated(T4),
      );
      expect(lines.map((l) => [l.from, l.to])).toEqual([[T0, T1]]);
    });
  });

  describe('when the node goes offline under a running session', () => {
    it('bills to the node’s last report (endedAt), not to the termination', () => {
      const lastReport = '2026-12-02T10:05:00.000Z';
      const { lines } = given(requested(), started(T0), terminated(T2, lastReport, 'node_offline'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ from: T0, to: lastReport, seconds: 300, amount: 600 });
    });
  });

  describe('when a CPU session runs', () => {
    it('bills per vCPU with a null model and no cards', () => {
      const { lines } = given(
        requested(),
        started(T0, cpu),
        terminated('2026-12-02T10:30:00.000Z'),
      );
      expect(lines).toEqual([
        expect.objectContaining({
          gpuModel: null,
          gpuUuids: [],
          units: 8,
          seconds: 1800,
          amount: 144, // 0.5 h × 8 vCPU × 36
        }),
      ]);
    });
  });

  describe('when a segment is still open', () => {
    it('is not a line yet', () => {
      expect(given(requested(), started(T0)).lines).toEqual([]);
      expect(given(requested(), started(T0), paused(T1), resumed(T2)).lines).toHaveLength(1);
    });
  });

  describe('when times carry an offset', () => {
    it('stores them as UTC toISOString() so string order is time order', () => {
      const { lines } = given(
        requested(),
        started('2026-12-02T19:00:00+09:00'),
        paused('2026-12-02T10:00:01Z'),
      );
      expect(lines[0]).toMatchObject({ from: T0, to: '2026-12-02T10:00:01.000Z', amount: 2 });
    });
  });

  it('rounds exactly half a minor unit up and just under half down', () => {
    const half = given(
      requested(),
      started(T0, gpu({ units: 1 })),
      paused('2026-12-02T10:00:00.500Z'),
    );
    const under = given(
      requested(),
      started(T0, gpu({ units: 1 })),
      paused('2026-12-02T10:00:00.499Z'),
    );
    expect(half.lines[0].amount).toBe(1);
    expect(under.lines[0].amount).toBe(0);
  });
});

describe('billing record mapping', () => {
  const [line] = segmentsOf([requested(), started(T0), paused(T1)]);

  it('is the line with the closing event id as record id', () => {
    expect(toBillingRecord('evt-1', line)).toEqual({ recordId: 'evt-1', ...line });
  });

  it('serves exactly the API fields of a stored document', () => {
    const view = recordView({ _id: 'evt-1', ...toBillingRecord('evt-1', line), extra: 1 });
    expect(Object.keys(view)).toEqual([...RECORD_FIELDS]);
    expect(view).toMatchObject({
      recordId: 'evt-1',
      sessionId: 's1',
      owner: 'alice',
      nodeId: 'n1',
      hostname: 'gpu-a-01',
      gpuUuids: ['GPU-1', 'GPU-2'],
      gpuModel: 'L40S',
      from: T0,
      to: T1,
      seconds: 600,
      unitPricePerHour: 3600,
      amount: 1200,
      currency: 'KRW',
    });
  });
});
