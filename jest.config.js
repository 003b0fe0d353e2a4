/**
 * Four projects: fast pure-logic unit tests; integration tests against the real servers (with the
 * console's browser tests, which need the same servers); fault tests, which start their own
 * servers and kill processes; and the production rehearsal. `npm test` runs them in two passes
 * (tools/run-jest.mjs).
 */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };

module.exports = {
  testTimeout: 60_000,
  // With one worker Jest runs every file inside its own process, so one handle a test forgot to
  // close (once a MongoDB client's 10 s heartbeat timer) kept the whole run alive after its summary
  // until CI's time limit. Forgotten MongoDB clients now fail their file (leak-checking-environment.ts);
  // for any other kind of handle, exit once the results are in.
  forceExit: true,
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
      testEnvironment: '<rootDir>/test/support/leak-checking-environment.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/mongo-client-tracking.ts'],
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
      // Real processes killed and restarted (npm run test:faults alone; npm test runs it with the rest).
      displayName: 'faults',
      testEnvironment: '<rootDir>/test/support/leak-checking-environment.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/mongo-client-tracking.ts'],
      transform,
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // The compose deployment rehearsed natively: builds dist/ and runs it (npm run test:production).
      displayName: 'production',
      testEnvironment: '<rootDir>/test/support/leak-checking-environment.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/mongo-client-tracking.ts'],
      transform,
      testMatch: ['<rootDir>/test/production/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
