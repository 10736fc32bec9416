import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { CountedHistogram } from './counted-histogram';

// Binary fractions: bounds hit exactly, and sums are exact whatever the order of additions.
const BOUNDS = [0.0625, 0.125, 0.5, 1];
const NAME = 'test_duration_seconds';

const pair = () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({
    name: NAME,
    help: 'h',
    labelNames: ['command', 'result'] as const,
    buckets: BOUNDS,
    registers: [theirs],
  });
  const counted = new CountedHistogram(NAME, 'h', ['command', 'result'], BOUNDS, ours);
  return { theirs, ours, reference, counted };
};

// Values that land on, between and beyond the bounds.
const value = fc.constantFrom(0, 0.03125, 0.0625, 0.09375, 0.125, 0.5, 0.75, 1, 2, 1024);
const labels = fc.record({
  command: fc.constantFrom('Ping', 'ReportNode', 'we"ird\\name'),
  result: fc.constantFrom('ok', 'noop'),
});

describe('CountedHistogram', () => {
  it('renders exactly what prom-client renders for the same observations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(labels, value, fc.integer({ min: 1, max: 5 })), { maxLength: 40 }),
        async (observations) => {
          const { theirs, ours, reference, counted } = pair();
          for (const [l, v, n] of observations) {
            for (let i = 0; i < n; i++) reference.observe(l, v);
            counted.observe(l, v, n);
          }
          expect(await ours.metrics()).toBe(await theirs.metrics());
          // prom-client's JSON also carries an empty exemplar per value; nothing else differs.
          const json = (metrics: unknown): unknown =>
            JSON.parse(
              JSON.stringify(metrics, (key, v: unknown) => (key === 'exemplar' ? undefined : v)),
            );
          expect(json(await ours.getMetricsAsJSON())).toEqual(
            json(await theirs.getMetricsAsJSON()),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a value or count that is not a measurement, changing nothing', async () => {
    const { ours, counted } = pair();
    counted.observe({ command: 'Ping', result: 'ok' }, 0.5);
    const before = await ours.metrics();
    expect(() => counted.observe({ command: 'Ping', result: 'ok' }, Number.NaN)).toThrow(TypeError);
    expect(() => counted.observe({ command: 'Ping', result: 'ok' }, 0.5, 0)).toThrow(RangeError);
    expect(() => counted.observe({ command: 'Ping', result: 'ok' }, 0.5, 1.5)).toThrow(RangeError);
    expect(await ours.metrics()).toBe(before);
  });

  it('starts over on reset, as the registry asks', async () => {
    const { ours, counted } = pair();
    counted.observe({ command: 'Ping', result: 'ok' }, 0.5, 3);
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(`# HELP ${NAME} h\n# TYPE ${NAME} histogram\n`);
  });
});
