/**
 * Billing arithmetic, exact in integers. A segment's amount is
 * round_half_up(ms × units × pricePerHour / 3_600_000) in minor units (API.md): computed
 * with BigInt as floor((2·n + d) / (2·d)), so no float ever rounds a bill.
 */
export const MS_PER_HOUR = 3_600_000n;

export const segmentAmount = (ms: number, units: number, pricePerHour: number): number => {
  if (!Number.isInteger(ms) || ms < 0)
    throw new RangeError(`segment length must be whole ms ≥ 0, got ${ms}`);
  if (!Number.isInteger(units) || units < 0)
    throw new RangeError(`units must be a whole number ≥ 0, got ${units}`);
  if (!Number.isInteger(pricePerHour) || pricePerHour < 0) {
    throw new RangeError(`price must be whole minor units ≥ 0, got ${pricePerHour}`);
  }
  const numerator = BigInt(ms) * BigInt(units) * BigInt(pricePerHour);
  return Number((2n * numerator + MS_PER_HOUR) / (2n * MS_PER_HOUR));
};

/** A closed running interval, priced. */
export type Segment = {
  readonly from: string;
  readonly to: string;
  readonly ms: number;
  readonly seconds: number;
  readonly amount: number;
};

export const priceSegment = (
  from: string,
  to: string,
  units: number,
  pricePerHour: number,
): Segment => {
  const ms = Math.max(0, Date.parse(to) - Date.parse(from));
  return { from, to, ms, seconds: ms / 1000, amount: segmentAmount(ms, units, pricePerHour) };
};
