import { BillingLine, BillingRecord, toBillingRecord } from './billing-line';
import { compareBilling } from './billing-verify';

const line = (from: string, to: string, amount: number): BillingLine => ({
  sessionId: 's1',
  owner: 'alice',
  nodeId: 'n1',
  hostname: 'gpu-a-01',
  gpuUuids: ['GPU-1'],
  gpuModel: 'L40S',
  from,
  to,
  seconds: (Date.parse(to) - Date.parse(from)) / 1000,
  unitPricePerHour: 3600,
  amount,
  currency: 'KRW',
  units: 1,
});
const A = line('2026-12-02T10:00:00.000Z', '2026-12-02T10:10:00.000Z', 600);
const B = line('2026-12-02T10:20:00.000Z', '2026-12-02T10:30:00.000Z', 600);
const rec = (id: string, l: BillingLine): BillingRecord => toBillingRecord(id, l);

describe('compareBilling', () => {
  it('is ok when every record matches a recomputed line, whatever the stored order', () => {
    expect(compareBilling('s1', [rec('r2', B), rec('r1', A)], [A, B])).toEqual({
      sessionId: 's1',
      recorded: 1200,
      recomputed: 1200,
      ok: true,
      details: [],
    });
  });

  it('names a line the records lack', () => {
    const v = compareBilling('s1', [rec('r1', A)], [A, B]);
    expect(v).toMatchObject({ recorded: 600, recomputed: 1200, ok: false });
    expect(v.details).toEqual([
      {
        index: 1,
        problem: 'missing_record',
        recordId: null,
        recorded: null,
        recomputed: { from: B.from, to: B.to, amount: 600 },
      },
    ]);
  });

  it('names a record no event explains', () => {
    const v = compareBilling('s1', [rec('r1', A), rec('r9', B)], [A]);
    expect(v.ok).toBe(false);
    expect(v.details).toEqual([
      expect.objectContaining({ problem: 'unexpected_record', recordId: 'r9' }),
    ]);
  });

  it('is not ok when the sums agree but the lines do not', () => {
    // Same total, different split: a tampered read model must not pass on the sum alone.
    const shifted = [rec('r1', { ...A, amount: 500 }), rec('r2', { ...B, amount: 700 })];
    const v = compareBilling('s1', shifted, [A, B]);
    expect(v).toMatchObject({ recorded: 1200, recomputed: 1200, ok: false });
    expect(v.details.map((d) => d.problem)).toEqual(['different', 'different']);
  });

  it('compares times as instants, not as strings', () => {
    const offset = rec('r1', { ...A, from: '2026-12-02T19:00:00+09:00' });
    expect(compareBilling('s1', [offset], [A]).ok).toBe(true);
  });

  it('is ok for a session that never ran', () => {
    expect(compareBilling('s1', [], [])).toMatchObject({ recorded: 0, recomputed: 0, ok: true });
  });
});
