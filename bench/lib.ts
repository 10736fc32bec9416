import os from 'node:os';

/** One measured figure, printed beside the ceiling it is compared with (measured in the same run). */
export type Figure = {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The same work done the rawest way available, measured in the same run. */
  readonly ceiling?: { readonly name: string; readonly value: number };
  /** What the issue asks for, in words (e.g. '>= 60 % of ceiling'). */
  readonly target?: string;
  /** Whether the target is met, when it can be judged from the figures. */
  readonly met?: boolean;
};

export type BenchSuite = { readonly name: string; readonly run: () => Promise<Figure[]> };

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

/** Runs `fn` `times` times and returns the median of what it returns. */
export const medianOf = async (times: number, fn: () => Promise<number>): Promise<number> => {
  const xs: number[] = [];
  for (let i = 0; i < times; i++) xs.push(await fn());
  return median(xs);
};

export const machine = (): string =>
  `${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
  `${os.platform()} ${os.release()}, Node ${process.version}`;

/** A profile's script URL, short: its path under node_modules/ or dist/, or `(native)`. */
export const sourceOf = (url: string): string => {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + '/dist/'.length) : url || '(native)';
};
