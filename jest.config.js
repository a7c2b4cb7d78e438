/** Unit tests live beside pure code in src/; e2e tests in test/e2e run the real app on real PostgreSQL and Redis. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

module.exports = {
  testTimeout: 30000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      transform: { '^.+\\.ts$': tsJest },
      globalSetup: '<rootDir>/test/e2e/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/setup/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/e2e/setup/contract/check-every-answer.ts'],
    },
  ],
};
