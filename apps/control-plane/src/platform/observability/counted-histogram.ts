import type { Metric, Registry } from 'prom-client';
import { LabelIndex } from './label-index';

type Series<L extends string> = {
  readonly labels: Readonly<Record<L, string>>;
  /** Observations per bucket, not cumulative (the last slot: above every bound). */
  readonly buckets: number[];
  sum: number;
  count: number;
};

type Value = {
  readonly metricName: string;
  readonly labels: Record<string, string | number>;
  readonly sharedLabels: Record<string, string>;
  readonly value: number;
};

/**
 * A Prometheus histogram that takes `count` equal observations in one call, rendered exactly
 * as prom-client renders its own `Histogram` (same series, order and label layout) in the
 * registry it joins. prom-client observes one value at a time, hashing the label set each
 * time: a report of 100 unchanged nodes is 100 no-op commands decided in one pass, and was
 * 100 observations.
 */
export class CountedHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: LabelIndex<L, Series<L>>;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    this.series = new LabelIndex(labelNames);
    registry.registerMetric(this as unknown as Metric);
  }

  observe(labels: Readonly<Record<L, string>>, value: number, count = 1): void {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite observation: ${value}`);
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`bad count: ${count}`);
    let series = this.series.get(labels);
    if (series === undefined) {
      const own = {} as Record<L, string>;
      for (const name of this.labelNames) own[name] = labels[name];
      series = {
        labels: own,
        buckets: new Array<number>(this.upperBounds.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      this.series.add(own, series);
    }
    let i = 0;
    while (i < this.upperBounds.length && value > this.upperBounds[i]) i++;
    series.buckets[i] += count;
    series.sum += value * count;
    series.count += count;
  }

  reset(): void {
    this.series.clear();
  }

  /** Each label set observed and how many observations it has. */
  *counts(): IterableIterator<{ labels: Readonly<Record<L, string>>; count: number }> {
    for (const s of this.series.values()) yield { labels: s.labels, count: s.count };
  }

  /** What the registry renders as text (prom-client's layout: `le` first, then the series' labels). */
  getForPromString(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Value[];
  } {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += series.buckets[i];
        values.push({
          metricName: bucket,
          labels: { le },
          sharedLabels: series.labels,
          value: cumulative,
        });
      });
      values.push(
        {
          metricName: bucket,
          labels: { le: '+Inf' },
          sharedLabels: series.labels,
          value: series.count,
        },
        {
          metricName: `${this.name}_sum`,
          labels: {},
          sharedLabels: series.labels,
          value: series.sum,
        },
        {
          metricName: `${this.name}_count`,
          labels: {},
          sharedLabels: series.labels,
          value: series.count,
        },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    };
  }

  /** The same values with each series' labels merged in after `le` (prom-client's `get`). */
  get(): { name: string; help: string; type: string; aggregator: string; values: unknown[] } {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }
}
