/**
 * Test files in the `slow` project (vitest.config.ts): each starts many processes, a database
 * server, a browser or a chaos run, and together they take most of the suite's time. The `fast`
 * project is the rest. Kept as a list: a new slow file added here keeps `npm run test:fast` fast.
 */
export const SLOW_TESTS: string[] = [];
