import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { sliceBoundaries } from './eslint.boundaries.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
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
  // Slices import each other only through their faces, and no layer imports a higher one.
  ...sliceBoundaries,
);
