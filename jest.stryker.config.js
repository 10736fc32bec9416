// The mutation run's jest config (stryker.config.json): the unit project alone, flat (Stryker's
// jest runner takes one project), over the feature folders and the kernel: no Redis, no server.
// platform/ is left out: its specs load the whole Nest app (seconds per mutant) and pin the
// HTTP layer, not the domain.
const { projects } = require('./jest.config');

const { displayName: _name, ...unit } = projects.find((p) => p.displayName === 'unit');

module.exports = {
  ...unit,
  roots: ['<rootDir>/apps/control-plane/src', '<rootDir>/libs/kernel'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/apps/control-plane/src/platform/'],
};
