import { NodeReportDto } from './inventory.dto';

const LABEL_KEY =
  /^([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;

/** Texts remembered per pattern; past this many, it starts over. */
const KNOWN_CAPACITY = 10_000;

/**
 * Kubernetes label keys and values, with the ones seen valid before remembered: a fleet repeats
 * a handful on every node of every report, and a Set lookup is much cheaper than the patterns.
 */
export class LabelRules {
  private readonly keys = new Set<string>();
  private readonly values = new Set<string>();

  isLabel(key: string, value: unknown): boolean {
    return (
      this.valid(this.keys, LABEL_KEY, key) &&
      typeof value === 'string' &&
      this.valid(this.values, LABEL_VALUE, value)
    );
  }

  private valid(known: Set<string>, pattern: RegExp, text: string): boolean {
    if (known.has(text)) return true;
    if (!pattern.test(text)) return false;
    if (known.size >= KNOWN_CAPACITY) known.clear();
    known.add(text);
    return true;
  }
}

/**
 * How far ahead of the server's receive time an observedAt may be: reports are ordered by it,
 * so one from a clock far ahead would make every later real report look older (a frozen node).
 */
const OBSERVED_AHEAD_MS = 60_000;

export type Problem = { field: string; problems: string[] };

/** What class-validator cannot express of a report, naming each bad field. */
export const reportProblems = (
  nodes: readonly NodeReportDto[],
  now: Date,
  labelRules: LabelRules,
): Problem[] => {
  const out: Problem[] = [];
  const hostnames = new Set<string>();
  /** uuid → the index of the first node listing it: one card is on one node. */
  const cards = new Map<string, number>();
  const latest = now.getTime() + OBSERVED_AHEAD_MS;
  nodes.forEach((n, i) => {
    const at = `nodes.${i}`;
    if (hostnames.has(n.hostname))
      out.push({ field: `${at}.hostname`, problems: ['appears twice in this report'] });
    hostnames.add(n.hostname);
    const labels = n.labels ?? {};
    const keys = Object.keys(labels);
    if (keys.length > 64) out.push({ field: `${at}.labels`, problems: ['at most 64 labels'] });
    for (const k of keys) {
      if (!labelRules.isLabel(k, labels[k])) {
        out.push({
          field: `${at}.labels.${k}`,
          problems: ['must be a Kubernetes label key with a string value'],
        });
      }
    }
    const mode = labels['fleet/mode'];
    if (mode !== undefined && mode !== 'shared' && mode !== 'dedicated') {
      out.push({ field: `${at}.labels.fleet/mode`, problems: ['must be shared or dedicated'] });
    }
    const gpus = n.gpus ?? [];
    if (gpus.length > 0 && n.role !== 'gpu')
      out.push({ field: `${at}.gpus`, problems: ['only gpu nodes carry GPU cards'] });
    let twice = false;
    let taken: Problem[] | undefined; // rare: none allocated
    for (let k = 0; k < gpus.length; k++) {
      const first = cards.get(gpus[k].uuid);
      if (first === undefined) cards.set(gpus[k].uuid, i);
      else if (first === i) twice = true;
      else
        (taken ??= []).push({
          field: `${at}.gpus.${k}.uuid`,
          problems: [`also reported by nodes.${first}`],
        });
    }
    if (twice) out.push({ field: `${at}.gpus`, problems: ['a GPU uuid appears twice'] });
    if (taken) out.push(...taken);
    if (n.observedAt && Date.parse(n.observedAt) > latest) {
      out.push({
        field: `${at}.observedAt`,
        problems: [
          `is more than ${OBSERVED_AHEAD_MS / 1000} s after the server's time (${now.toISOString()}): the operator's clock is wrong`,
        ],
      });
    }
  });
  return out;
};
