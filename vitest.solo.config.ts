import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * Tests that measure how long another tenant waits while one attacks: run alone, after the main
 * stage, so other test files sharing the two cores are not what they measure.
 */
export const SOLO_TEST_FILES = ['test/integration/hostile-tenant.test.ts'];

export default defineConfig({
  test: {
    ...base.test,
    include: SOLO_TEST_FILES,
    exclude: ['**/node_modules/**'],
    maxWorkers: 1,
  },
});
