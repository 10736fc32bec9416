import { APP_NODE_FLAGS } from '../../apps/control-plane/src/config/node-flags';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually } from '../support/reports';

/** The compiled app at LOG_LEVEL=info, its log lines once it says it is listening. */
const startedLines = async (
  nodeFlags: readonly string[],
): Promise<{
  app: ChildApp;
  lines: Array<{ level: string; msg?: string; missing?: string[] }>;
}> => {
  const app = await startChildApp({ LOG_LEVEL: 'info' }, { redis: false, nodeFlags });
  await eventually(async () => app.output().includes('control plane listening'));
  const lines = app
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; msg?: string; missing?: string[] });
  return { app, lines };
};

describe("the app's node flags (compiled app)", () => {
  const apps: ChildApp[] = [];
  beforeAll(() => ensureBuilt(), 60_000);
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.kill('SIGKILL')));
  });

  it('started as npm start starts it: no warning about them', async () => {
    const { app, lines } = await startedLines(APP_NODE_FLAGS);
    apps.push(app);
    expect(lines.some((l) => l.msg === 'control plane listening')).toBe(true);
    expect(lines.filter((l) => l.missing !== undefined)).toEqual([]);
  }, 60_000);

  it('started without them: it runs, and one warning names what is missing', async () => {
    const { app, lines } = await startedLines([]);
    apps.push(app);
    expect((await fetch(`${app.url}/health/ready`)).status).toBe(200);
    const warned = lines.filter((l) => l.missing !== undefined);
    expect(warned).toHaveLength(1);
    expect(warned[0].level).toBe('warn');
    expect(warned[0].missing).toEqual([...APP_NODE_FLAGS]);
    expect(warned[0].msg).toContain(APP_NODE_FLAGS[0]);
  }, 60_000);
});
