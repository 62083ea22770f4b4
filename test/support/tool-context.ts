import { createNoneSandbox } from '../../src/sandbox/none.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { SessionScratch } from '../../src/tools/scratch.js';
import { MemoryState, type ToolContext } from '../../src/tools/types.js';

/**
 * The real `none` backend, created on first use so that building a context stays synchronous.
 * Tests of isolation itself use the bwrap backend directly (test/sandbox).
 */
export function unconfinedSandbox(workspace: string, hostEnv?: NodeJS.ProcessEnv): Sandbox {
  let made: Promise<Sandbox> | undefined;
  const get = () => {
    made ??= createNoneSandbox({
      workspace,
      network: true,
      envAllow: ['HOME', 'USER', 'XDG_CONFIG_HOME', 'GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_GLOBAL'],
      hostEnv,
    });
    return made;
  };
  return {
    kind: 'none',
    description: 'none (tests)',
    safeguards: [],
    exec: async (req) => (await get()).exec(req),
    dispose: async () => (await made)?.dispose(),
  };
}

/** A ToolContext for calling tools directly in tests. */
export function makeToolContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    signal: new AbortController().signal,
    scratch: new SessionScratch(),
    durable: new MemoryState(),
    progress: () => {},
    sandbox: unconfinedSandbox(workspace),
    ...overrides,
  };
}
