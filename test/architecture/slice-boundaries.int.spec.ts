import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Lints each source text as if it were the file named, with the repository's own ESLint
 * configuration (what `npm run lint` and CI run), in one child process: ESLint loads its flat
 * config as an ES module, which jest's module system does not. Answers the messages of
 * `no-restricted-imports` per file, in order.
 */
const importErrors = (files: Record<string, string>): Record<string, string[]> => {
  const script = `
    const { ESLint } = require('eslint');
    const files = JSON.parse(process.argv[1]);
    (async () => {
      const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
      const out = {};
      for (const [filePath, text] of Object.entries(files)) {
        const [result] = await eslint.lintText(text, { filePath });
        out[filePath] = result.messages
          .filter((m) => m.ruleId === 'no-restricted-imports')
          .map((m) => m.message);
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { console.error(e); process.exit(2); });
  `;
  const run = spawnSync(process.execPath, ['-e', script, JSON.stringify(files)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`eslint failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, string[]>;
};

const src = (file: string) => path.join(ROOT, 'apps/control-plane/src', file);
const importing = (from: string) => `import { x } from '${from}';\nexport const y = x;\n`;

describe('the import rule (eslint.boundaries.mjs, run by npm run lint)', () => {
  const cases = {
    internals: [src('sessions/lint-probe.ts'), importing('../nodes/node.decider')],
    face: [src('sessions/lint-probe.ts'), importing('../nodes')],
    upward: [src('clusters/lint-probe.ts'), importing('../operations')],
    upwardNested: [src('nodes/liveness/lint-probe.ts'), importing('../../sessions')],
    internalsNested: [
      src('nodes/liveness/lint-probe.ts'),
      importing('../../clusters/cluster.events'),
    ],
    ownFiles: [src('nodes/liveness/lint-probe.ts'), importing('../node.events')],
    ownFace: [src('nodes/liveness/lint-probe.ts'), importing('..')],
    peer: [src('drains/lint-probe.ts'), importing('../provisioner')],
    configUp: [src('config/lint-probe.ts'), importing('../platform/auth/jwt-secret')],
    platformUp: [src('platform/http/lint-probe.ts'), importing('../../nodes')],
    shared: [src('pools/lint-probe.ts'), importing('../platform/http/ids')],
    root: [src('app.lint-probe.ts'), importing('./nodes/nodes.module')],
    library: [
      path.join(ROOT, 'libs/cqrs/src/lint-probe.ts'),
      importing('../../../apps/control-plane/src/nodes'),
    ],
    spec: [src('sessions/lint-probe.unit.spec.ts'), importing('../nodes/node.decider')],
  } as const;
  let errors: Record<string, string[]>;
  /** Each case's probe is named after it, beside the file it stands for. */
  const probe = (name: string, file: string) => file.replace('lint-probe', `lint-probe-${name}`);
  const errorsOf = (name: keyof typeof cases) => errors[probe(name, cases[name][0])];

  beforeAll(() => {
    errors = importErrors(
      Object.fromEntries(
        Object.entries(cases).map(([name, [file, text]]) => [probe(name, file), text]),
      ),
    );
  });

  describe("when a slice imports another slice's file", () => {
    it('fails, naming the face to import instead', () => {
      expect(errorsOf('internals')).toEqual([
        expect.stringContaining("Import the nodes slice through its face ('../nodes')"),
      ]);
    });

    it('fails from a nested folder too', () => {
      expect(errorsOf('internalsNested')).toEqual([
        expect.stringContaining("Import the clusters slice through its face ('../../clusters')"),
      ]);
    });
  });

  describe('when a lower layer imports a higher one', () => {
    it('fails for a slice below (clusters importing operations)', () => {
      expect(errorsOf('upward')).toEqual([
        expect.stringContaining('clusters may not import operations'),
      ]);
    });

    it('fails from a nested folder (nodes/liveness importing sessions)', () => {
      expect(errorsOf('upwardNested')).toEqual([
        expect.stringContaining('nodes may not import sessions'),
      ]);
    });

    it('fails for the shared layers (config importing platform, platform importing a slice)', () => {
      expect(errorsOf('configUp')).toEqual([
        expect.stringContaining('config may not import platform'),
      ]);
      expect(errorsOf('platformUp')).toEqual([
        expect.stringContaining('platform may not import nodes'),
      ]);
    });

    it('fails for a peer of the same layer (drains importing the provisioner)', () => {
      expect(errorsOf('peer')).toEqual([
        expect.stringContaining('drains may not import provisioner'),
      ]);
    });

    it('fails for a library importing the app', () => {
      expect(errorsOf('library')).toEqual([expect.stringContaining('libs/ may not import apps/')]);
    });
  });

  it("fails for a slice importing its own face (the face imports the slice's files)", () => {
    expect(errorsOf('ownFace')).toEqual([
      expect.stringContaining('Inside nodes, import its files, not its own face'),
    ]);
  });

  it("fails for the app's root importing a slice's file", () => {
    expect(errorsOf('root')).toEqual([
      expect.stringContaining('Import the nodes slice through its face'),
    ]);
  });

  it("passes another slice's face, the slice's own files and the shared layers' files", () => {
    expect(errorsOf('face')).toEqual([]);
    expect(errorsOf('ownFiles')).toEqual([]);
    expect(errorsOf('shared')).toEqual([]);
  });

  it('leaves specs free to build fixtures from any file', () => {
    expect(errorsOf('spec')).toEqual([]);
  });
});
