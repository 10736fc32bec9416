import { isListed, isOneMinorForward, minorOf, parseK8sVersions } from './k8s-versions';

const catalog = parseK8sVersions('1.29,1.30*,1.31');

describe('K8S_VERSIONS', () => {
  it('reads consecutive minors with one default', () => {
    expect(catalog).toEqual([
      { version: '1.29', default: false },
      { version: '1.30', default: true },
      { version: '1.31', default: false },
    ]);
    expect(parseK8sVersions('1.29,1.31*')).toEqual({ problem: expect.stringContaining('1.31') });
    expect(parseK8sVersions('1.29,1.30')).toEqual({ problem: expect.stringContaining('found 0') });
  });

  it('lists a minor and its patches; an upgrade is exactly one minor forward', () => {
    if ('problem' in catalog) throw new Error(catalog.problem);
    expect(minorOf('v1.30.4')).toBe('1.30');
    expect(minorOf('1.30-rc')).toBeNull();
    expect(['1.29', '1.30.4', 'v1.31.0'].every((v) => isListed(catalog, v))).toBe(true);
    expect(isListed(catalog, '1.28')).toBe(false);
    expect(isOneMinorForward(catalog, '1.29.3', '1.30.1')).toBe(true);
    expect(isOneMinorForward(catalog, '1.29', '1.31')).toBe(false);
    expect(isOneMinorForward(catalog, '1.30', '1.30.9')).toBe(false);
    expect(isOneMinorForward(catalog, '1.31', '1.32')).toBe(false);
    expect(isOneMinorForward(catalog, null, '1.29')).toBe(true);
  });
});
