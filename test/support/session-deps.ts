import type { AgentEvent } from '../../src/agent/events.js';
import type { SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import type { Db } from '../../src/store/sqlite/database.js';
import { SqliteSessionStorage } from '../../src/store/sqlite/sessions.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ScriptedServer } from './scripted-server.js';
import { unconfinedSandbox } from './tool-context.js';

/** An `AgentSession`'s deps for tests: the database given, the scripted server, the default tools, auto mode. */
export function sessionDeps(
  at: { db: Db; server: ScriptedServer; workspace: string },
  overrides: Partial<SessionDeps> = {},
): SessionDeps {
  return {
    store: new SqliteSessionStorage(at.db, ':memory:'),
    llm: createLlmClient({ baseUrl: at.server.baseUrl, model: 'm', retry: { maxRetries: 0 } }),
    tools: new ToolRegistry(selectTools()),
    gate: new PermissionGate('auto', { allow: [], deny: [] }, at.workspace),
    sandbox: unconfinedSandbox(at.workspace),
    workspace: at.workspace,
    maxIterations: 20,
    ...overrides,
  };
}

/** Every event of a run, in order. */
export async function collectEvents(events: AsyncGenerator<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}
