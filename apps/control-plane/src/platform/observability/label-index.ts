/**
 * Values by label set, found without building a key: a Map per label, in the order of
 * `labelNames`. Every request and command is counted here, and its label values are strings
 * their callers keep (a route template, a command type), so a lookup hashes nothing new and
 * allocates nothing. `values()` is in the order the label sets were first seen, as
 * prom-client renders its series.
 */
export class LabelIndex<L extends string, T> {
  private readonly root = new Map<string, unknown>();
  private readonly inOrder: T[] = [];

  constructor(private readonly labelNames: readonly L[]) {
    if (labelNames.length === 0) throw new Error('a label index needs at least one label');
  }

  get(labels: Readonly<Record<L, string>>): T | undefined {
    const names = this.labelNames;
    let level = this.root;
    for (let i = 0; i < names.length - 1; i++) {
      const next = level.get(labels[names[i]]) as Map<string, unknown> | undefined;
      if (next === undefined) return undefined;
      level = next;
    }
    return level.get(labels[names[names.length - 1]]) as T | undefined;
  }

  /** Adds `value` for a label set not in the index yet (`get` gave undefined). */
  add(labels: Readonly<Record<L, string>>, value: T): void {
    const names = this.labelNames;
    let level = this.root;
    for (let i = 0; i < names.length - 1; i++) {
      let next = level.get(labels[names[i]]) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(labels[names[i]], (next = new Map()));
      level = next;
    }
    const last = labels[names[names.length - 1]];
    if (level.has(last)) throw new Error('label set already in the index');
    level.set(last, value);
    this.inOrder.push(value);
  }

  values(): readonly T[] {
    return this.inOrder;
  }

  clear(): void {
    this.root.clear();
    this.inOrder.length = 0;
  }
}
