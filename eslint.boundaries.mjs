// Slices and layers of the control plane (apps/control-plane/src), lowest first (issue #36). A
// file imports lower layers only, and another slice only through its face: `../<slice>`, the
// slice's index.ts. Shared layers (catalog, config, platform) have no face: their files are
// imported by path. Peers of one layer do not import each other. Specs are exempt: a spec may
// build its fixtures from any file it needs.
const SRC = 'apps/control-plane/src';
const LAYERS = [
  ['catalog'],
  ['config'],
  ['platform'],
  ['clusters'],
  ['nodes'],
  ['pools'],
  ['sessions'],
  ['drains', 'provisioner'],
  ['operations', 'kubeconfig'],
  ['mesh', 'backups'],
  ['billing', 'notifications', 'audit'],
];
const SHARED = new Set(['catalog', 'config', 'platform']);
/** The composition root (app module, factory, main) and the CLI sit above every layer. */
const ROOT = ['app.module', 'app.factory', 'main', 'cli'];
const DEPTHS = [1, 2, 3, 4];

const up = (depth) => `^(\\.\\./){${depth}}`;

/** What a file `depth` folders below src/, in `folder` (of layer `rank`), may not import. */
const restricted = (folder, rank, depth) => {
  const patterns = [];
  LAYERS.forEach((names, r) => {
    for (const name of names) {
      if (name === folder) continue;
      if (r >= rank) {
        patterns.push({
          regex: `${up(depth)}${name}(/.*)?$`,
          message: `${folder} may not import ${name}: only layers below its own (eslint.boundaries.mjs).`,
        });
      } else if (!SHARED.has(name)) {
        patterns.push({
          regex: `${up(depth)}${name}/.+`,
          message: `Import the ${name} slice through its face ('${'../'.repeat(depth)}${name}'), not its files.`,
        });
      }
    }
  });
  patterns.push({
    // Its own face re-exports its files: imported from inside, that is a cycle.
    regex: '^\\.{1,2}(/\\.\\.)*(/index)?/?$',
    message: `Inside ${folder}, import its files, not its own face.`,
  });
  patterns.push({
    regex: `${up(depth)}(${ROOT.join('|')})(/.*)?$`,
    message: 'The app root and the CLI wire the slices; no slice imports them.',
  });
  return patterns;
};

export const sliceBoundaries = [
  ...LAYERS.flatMap((names, rank) =>
    names.flatMap((folder) =>
      DEPTHS.map((depth) => ({
        files: [`${SRC}/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
        ignores: ['**/*.spec.ts', '**/testing/**'],
        rules: {
          'no-restricted-imports': ['error', { patterns: restricted(folder, rank, depth) }],
        },
      })),
    ),
  ),
  {
    // The root wires every slice, each through its face.
    files: [`${SRC}/*.ts`, `${SRC}/cli/*.ts`],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: LAYERS.flat()
            .filter((name) => !SHARED.has(name))
            .map((name) => ({
              regex: `^(\\./|\\.\\./)${name}/.+`,
              message: `Import the ${name} slice through its face, not its files.`,
            })),
        },
      ],
    },
  },
  {
    // The libraries know nothing of the apps built on them.
    files: ['libs/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(\\.\\./)+apps/', message: 'libs/ may not import apps/.' }] },
      ],
    },
  },
];
