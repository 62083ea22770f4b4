import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SLOW_TESTS } from './test/slow-tests.js';

// A slow file renamed or removed without its entry would quietly join the fast set.
const gone = SLOW_TESTS.filter((file) => !existsSync(file));
if (gone.length > 0) throw new Error(`test/slow-tests.ts names files that do not exist: ${gone.join(', ')}`);

/**
 * Three projects; `npm test` (and CI) runs all of them:
 * - fast: the unit and in-process tests, for development (`npm run test:fast`, a few minutes);
 * - slow: tests that start many processes, databases, browsers or chaos runs (test/slow-tests.ts);
 * - acceptance: the bin installed from `npm pack`, as a user has it (test/acceptance/).
 */
export default defineConfig({
  test: {
    // Vitest's default leaves a core idle (one worker on CI's two), yet most files wait on the
    // processes, servers and browsers they start: a worker per core nearly halves the run.
    maxWorkers: Math.max(2, availableParallelism()),
    testTimeout: 20_000,
    hookTimeout: 20_000,
    setupFiles: ['test/setup/path.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...SLOW_TESTS, 'test/acceptance/**'],
        },
      },
      { extends: true, test: { name: 'slow', include: SLOW_TESTS } },
      {
        extends: true,
        test: {
          name: 'acceptance',
          include: ['test/acceptance/**/*.test.ts'],
          globalSetup: ['test/acceptance/setup/install.ts'],
          // Installing takes a while on a cold cache; the set-up is waited for, not timed out.
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
