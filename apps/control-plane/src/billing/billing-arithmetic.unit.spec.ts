import { priceSegment, segmentAmount } from './billing-arithmetic';

describe('billing arithmetic', () => {
  it('charges a full hour of one card at the hourly price', () => {
    expect(segmentAmount(3_600_000, 1, 3600)).toBe(3600);
  });

  it('charges per card', () => {
    expect(segmentAmount(3_600_000, 2, 3600)).toBe(7200);
  });

  it('charges one second of an L40S at 3600/h as 1', () => {
    expect(segmentAmount(1000, 1, 3600)).toBe(1);
  });

  it('rounds half up: exactly half a minor unit becomes one', () => {
    // 500 ms × 1 × 3600 / 3_600_000 = 0.5
    expect(segmentAmount(500, 1, 3600)).toBe(1);
    // 499 ms → 0.499 → 0
    expect(segmentAmount(499, 1, 3600)).toBe(0);
    // 1500 ms → 1.5 → 2
    expect(segmentAmount(1500, 1, 3600)).toBe(2);
  });

  it('stays exact far beyond float precision', () => {
    // A year of 8 cards at 7200/h: 504,576,000 minor units, no float drift.
    expect(segmentAmount(365 * 24 * 3_600_000, 8, 7200)).toBe(504_576_000);
    expect(segmentAmount(365 * 24 * 3_600_000 + 1, 8, 7200)).toBe(504_576_000);
  });

  it('bills vCPUs the same way', () => {
    expect(segmentAmount(1_800_000, 8, 36)).toBe(144);
  });

  it('refuses negative or fractional inputs', () => {
    expect(() => segmentAmount(-1, 1, 1)).toThrow(RangeError);
    expect(() => segmentAmount(1.5, 1, 1)).toThrow(RangeError);
    expect(() => segmentAmount(1, 1, 0.5)).toThrow(RangeError);
  });

  it('prices a segment from ISO times, seconds with millisecond precision', () => {
    expect(priceSegment('2026-12-02T10:00:00.000Z', '2026-12-02T10:00:01.500Z', 2, 3600)).toEqual({
      from: '2026-12-02T10:00:00.000Z',
      to: '2026-12-02T10:00:01.500Z',
      ms: 1500,
      seconds: 1.5,
      amount: 3,
    });
  });
});
