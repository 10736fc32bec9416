// Three projects by file suffix: unit (pure, fast), int (real SQLite/Redis/BullMQ), e2e (the app over HTTP).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const base = {
  transform: { '^.+\\.ts$': swc },
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // tsconfig.json's path aliases (`@fleet/<lib>` is libs/<lib>/src).
  moduleNameMapper: {
    '^@fleet/(cqrs|eventstore|jobs|kernel|readmodels)$': '<rootDir>/libs/$1/src',
    '^@fleet/(cqrs|eventstore|jobs|kernel|readmodels)/(.*)$': '<rootDir>/libs/$1/src/$2',
  },
};
module.exports = {
  // A global option: jest ignores testTimeout inside `projects`.
  testTimeout: 120000,
  // What the apps of a run make (data directories, Redis prefixes) is removed when it ends.
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['**/*.unit.spec.ts'] },
    { ...base, displayName: 'int', testMatch: ['**/*.int.spec.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['**/*.e2e.spec.ts'] },
  ],
};
