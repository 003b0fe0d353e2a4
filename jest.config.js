/**
 * Two projects: fast pure-logic unit tests, and integration tests against the real servers (with
 * the console's browser tests, which need the same servers).
 */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };

module.exports = {
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      testMatch: [
        '<rootDir>/test/integration/**/*.test.ts',
        '<rootDir>/test/database/**/*.test.ts',
        '<rootDir>/test/e2e/**/*.test.ts',
      ],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // Real processes killed and restarted (npm run test:faults; .ci/run runs it after npm test).
      displayName: 'faults',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
