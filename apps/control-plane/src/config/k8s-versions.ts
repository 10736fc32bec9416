/**
 * The Kubernetes minors clusters may run (`K8S_VERSIONS`): a comma-separated run of
 * consecutive `MAJOR.MINOR` versions, oldest first, exactly one marked default with a
 * trailing `*` (`1.29,1.30*,1.31,1.32`). Pure: config.ts turns a problem into a ConfigError.
 */
export type K8sVersion = { readonly version: string; readonly default: boolean };

export const DEFAULT_K8S_VERSIONS = '1.29,1.30*,1.31,1.32';

const MINOR = /^(\d{1,3})\.(\d{1,3})(\*?)$/;

/** The catalog, or the problem with the text (named in the start's error). */
export const parseK8sVersions = (raw: string): K8sVersion[] | { problem: string } => {
  const items = raw.split(',').map((s) => s.trim());
  const parsed: Array<{ major: number; minor: number; version: string; default: boolean }> = [];
  for (const item of items) {
    const m = MINOR.exec(item);
    if (!m) return { problem: `"${item}" is not MAJOR.MINOR (a trailing * marks the default)` };
    const [major, minor] = [Number(m[1]), Number(m[2])];
    parsed.push({ major, minor, version: `${major}.${minor}`, default: m[3] === '*' });
  }
  const defaults = parsed.filter((p) => p.default).length;
  if (defaults !== 1)
    return { problem: `exactly one version must be marked * (found ${defaults})` };
  for (let i = 1; i < parsed.length; i++) {
    const [a, b] = [parsed[i - 1], parsed[i]];
    if (b.major !== a.major || b.minor !== a.minor + 1) {
      return {
        problem: `expected consecutive minors oldest first: ${b.version} after ${a.version}`,
      };
    }
  }
  return parsed.map((p) => ({ version: p.version, default: p.default }));
};

/** `1.30.4` or `v1.30` → `1.30`; null for anything else. */
export const minorOf = (version: string): string | null => {
  const m = /^v?(\d+)\.(\d+)(\.\d+)?$/.exec(version);
  return m ? `${Number(m[1])}.${Number(m[2])}` : null;
};

/** Whether the catalog lists the version's minor (a patch of a listed minor is listed). */
export const isListed = (catalog: readonly K8sVersion[], version: string): boolean => {
  const minor = minorOf(version);
  return minor !== null && catalog.some((v) => v.version === minor);
};

/**
 * An upgrade goes exactly one minor forward within the catalog: `to`'s minor is listed and
 * follows `from`'s. A cluster whose version is unknown (adopted) may go to any listed one.
 */
export const isOneMinorForward = (
  catalog: readonly K8sVersion[],
  from: string | null,
  to: string,
): boolean => {
  if (!isListed(catalog, to)) return false;
  if (from === null) return true;
  const [a, b] = [minorOf(from), minorOf(to)];
  if (a === null || b === null) return false;
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am === bm && bn === an + 1;
};
