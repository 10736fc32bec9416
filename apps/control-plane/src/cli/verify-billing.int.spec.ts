import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SqliteEventStore } from '@fleet/eventstore';
import { EmbeddedReadModelStore } from '@fleet/readmodels';
import { buildDist } from '../../../../test/support/child-app';
import { appendSession, placement } from '../../../../test/support/session-events';
import { BILLING_RECORDS, billingProjection } from '../billing';
import { rebuildReadModels } from '../platform/runtime/rebuild';
import { verifyBilling } from './verify-billing';

const ROOT = resolve(__dirname, '../../../..');
// `npm run verify-billing` runs the build (tsx would give Nest no decorator metadata).
const CLI = join(ROOT, 'dist/apps/control-plane/src/cli/verify-billing.js');

/** `npm run build`; what counts is that the CLI was emitted (tsc emits despite type errors elsewhere). */
const build = async (): Promise<string> => {
  const started = Date.now();
  const { output } = await buildDist();
  const emitted = statSync(CLI, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return emitted >= started - 1000 ? '' : `build did not emit ${CLI}:\n${output}`;
};

type Run = { code: number; stdout: string; stderr: string };

const runCli = (env: Record<string, string>, args: string[] = []): Promise<Run> =>
  new Promise((done) => {
    const { MONGO_URL: _m, EVENTSTORE_URL: _e, REDIS_URL: _r, ...rest } = process.env;
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: ROOT,
        env: { ...rest, AUTH_JWT_SECRET: 'verify-billing-test-secret-0123456789', ...env },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });

const T = (min: number) => new Date(Date.UTC(2026, 11, 2, 10, min)).toISOString();

/** Three sessions: paused and resumed, ended by its node going offline, never placed. */
const seed = async (store: SqliteEventStore) => {
  await appendSession(store, 's1', [
    { requested: T(0), owner: 'alice' },
    { started: T(0) },
    { paused: T(10) },
    { resumeRequested: T(20) },
    { resumed: T(25), placement: placement({ nodeId: 'n2', gpus: ['GPU-9'], units: 1 }) },
    { terminated: T(45) },
  ]);
  await appendSession(store, 's2', [
    { requested: T(1), owner: 'bob' },
    { started: T(1) },
    { terminated: T(30), endedAt: T(6), reason: 'node_offline' },
  ]);
  await appendSession(store, 's3', [{ requested: T(2), owner: 'bob' }, { terminated: T(3) }]);
};

describe('npm run verify-billing', () => {
  let dataDir: string;
  beforeAll(async () => {
    expect(await build()).toBe('');
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'verify-billing-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('verifies every session of the log and exits 0', async () => {
    const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
    await seed(store);
    await store.close();
    const run = await runCli({ DATA_DIR: dataDir });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // s1: 600 s × 2 + 1200 s × 1 = 2400; s2: 300 s × 2 = 600; s3: never ran.
    expect(run.stdout.trim().split('\n')).toEqual([
      'ok: 3 sessions verified, 3 ok, 0 mismatched, 0 orphan records, 0 behind; recorded 3000, recomputed 3000',
    ]);
  });

  it('succeeds on an empty log', async () => {
    const run = await runCli({ DATA_DIR: dataDir });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ok: 0 sessions verified/);
  });

  it('exits 2 on an unknown argument and 78 on bad configuration', async () => {
    expect((await runCli({ DATA_DIR: dataDir }, ['--nope'])).code).toBe(2);
    const bad = await runCli({ DATA_DIR: dataDir, MONGO_URL: 'http://not-mongo' });
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/MONGO_URL/);
  });

  describe('when the stored records disagree with the log', () => {
    // Records only ever come from the log, so a disagreement needs a read model written around
    // the projection: the comparison the CLI runs, on a tampered store.
    it('prints one line per mismatch and a summary, and exits 1', async () => {
      const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
      await seed(store);
      const readModels = new EmbeddedReadModelStore();
      await rebuildReadModels({ eventStore: store, readModels, projections: [billingProjection] });
      const s2 = (await readModels.find(BILLING_RECORDS, { sessionId: 's2' })).items[0];
      // A forged record for s3 (which never ran) and one for a session the log does not have.
      await readModels.commit(
        'tamper',
        [
          {
            op: 'insert',
            collection: BILLING_RECORDS,
            doc: { ...s2, _id: 'x1', recordId: 'x1', sessionId: 's3', amount: 5 },
          },
          {
            op: 'insert',
            collection: BILLING_RECORDS,
            doc: { ...s2, _id: 'x2', recordId: 'x2', sessionId: 'ghost' },
          },
        ],
        0,
      );
      const out: string[] = [];
      const code = await verifyBilling(store, readModels, (l) => out.push(l));
      await store.close();
      expect(code).toBe(1);
      expect(out).toEqual([
        `mismatch session=s3 line=0 unexpected_record record=x1 recorded=${T(1)}..${T(6)} amount=5 recomputed=-`,
        `mismatch session=ghost orphan record=x2 recorded=${T(1)}..${T(6)} amount=600 (no such session in the log)`,
        'MISMATCH: 3 sessions verified, 2 ok, 1 mismatched, 1 orphan records, 0 behind; recorded 3005, recomputed 3000',
      ]);
    });

    it('lists sessions the read model has not reached as behind, without failing', async () => {
      const store = new SqliteEventStore({ file: join(dataDir, 'events.db') });
      await seed(store);
      const readModels = new EmbeddedReadModelStore();
      await rebuildReadModels({ eventStore: store, readModels, projections: [billingProjection] });
      const s2Last = (await store.readStream('session-s2')).at(-1)!.position;
      const out: string[] = [];
      expect(await verifyBilling(store, readModels, (l) => out.push(l), s2Last)).toBe(0);
      await store.close();
      expect(out[0]).toMatch(/^behind session=s3 /);
      expect(out[1]).toMatch(/^ok: 2 sessions verified, 2 ok/);
    });
  });
});
