import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { sliceBoundaries } from './eslint.boundaries.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      'coverage/**',
      '.stryker-tmp/**',
      'reports/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Positions are made by the event stores only; elsewhere they come from the store or from
    // asLogPosition (a value read back or sent by a client), never cast from arithmetic.
    files: ['**/*.ts'],
    ignores: ['libs/eventstore/src/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression > TSTypeReference > Identifier[name='LogPosition']",
          message:
            'Positions are opaque: take them from the store, or asLogPosition for a stored one.',
        },
      ],
    },
  },
  {
    // Issue #36: a source file a reader can hold (400 lines) and functions of one screen or two
    // (80 lines), blank lines and comments not counted. Specs, test support and contract suites
    // are exempt: a suite reads best as one file of cases.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/testing/**', '**/test/**', '**/*.contract.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  // Slices import each other only through their faces, and no layer imports a higher one.
  ...sliceBoundaries,
);
