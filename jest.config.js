/** Jest: unit tests (pure rules, next to the code) and e2e tests (supertest against real PostgreSQL). */
// ts-jest in transpile-only mode (isolatedModules): fast, no type check (`npm run typecheck` does that).
// @swc/jest was faster still, but its platform binaries are not all on the registry this project's
// CI reaches, which makes `npm ci` refuse the lock file.
const tsJest = '<rootDir>/test/support/jest-transform.js';

// NestJS 12 and a few dependencies ship ES modules only; jest runs CommonJS, so ts-jest transforms them too.
const esmPackages = [
  '@nestjs',
  'file-type',
  'strtok3',
  'token-types',
  'peek-readable',
  '@tokenizer',
  'uint8array-extras',
  'load-esm',
  'async-exit-hook',
  'uuid',
];
const transformIgnorePatterns = [`/node_modules/(?!(${esmPackages.join('|')})/)`];
const transformJs = { '^.+\\.(t|j|mj)s$': tsJest };

module.exports = {
  // Applies to tests and hooks alike; e2e hooks boot an application and may wait on a busy machine.
  testTimeout: 60000,
  // Two workers on the 2-core machines this project runs on: jest's default (cores − 1 = 1) runs every
  // file in band, and the e2e files spend much of their time waiting on PostgreSQL (4.4 minutes for
  // the whole suite with two workers, 6.7 in band).
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/unit/**/*.spec.ts'],
      transform: transformJs,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      transform: transformJs,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
