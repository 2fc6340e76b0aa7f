import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The forks pool: Temporal's native worker is not safe in worker threads.
    pool: 'forks',
    maxWorkers: 2,
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Timing-sensitive attack tests run alone after this stage (vitest.solo.config.ts).
    exclude: ['**/node_modules/**', 'test/integration/hostile-tenant.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
