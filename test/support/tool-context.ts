import { MemoryState, type ToolContext } from '../../src/tools/types.js';

/** A ToolContext for calling tools directly in tests. */
export function makeToolContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    signal: new AbortController().signal,
    session: new Map(),
    state: new MemoryState(),
    ...overrides,
  };
}
