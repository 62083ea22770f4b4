/**
 * Runs one agent session step in its own process, for tests of what survives a restart:
 *   node --import tsx test/support/session-child.ts '{"db": ..., "workspace": ..., "baseUrl": ..., "task"?: ..., "resume"?: {...}}'
 * Prints each event as a JSON line, then {"session": id}.
 */
import { AgentSession, type SessionDeps } from '../../src/agent/session.js';
import { createLlmClient } from '../../src/llm/client.js';
import { PermissionGate } from '../../src/permissions/gate.js';
import { createNoneSandbox } from '../../src/sandbox/none.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteSessionStorage } from '../../src/store/sqlite/sessions.js';
import { selectTools } from '../../src/tools/catalog.js';
import { ToolRegistry } from '../../src/tools/registry.js';

interface Args {
  db: string;
  workspace: string;
  baseUrl: string;
  task?: string;
  sessionId?: string;
  approved?: string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const db = openDatabase(args.db);
const store = new SqliteSessionStorage(db, args.db);
const deps: SessionDeps = {
  store,
  llm: createLlmClient({ baseUrl: args.baseUrl, model: 'm', retry: { maxRetries: 0 } }),
  tools: new ToolRegistry(selectTools()),
  gate: new PermissionGate('normal', { allow: [], deny: [] }, args.workspace),
  sandbox: await createNoneSandbox({ workspace: args.workspace, network: false, envAllow: [] }),
  workspace: args.workspace,
  maxIterations: 10,
};
const session = args.sessionId
  ? await AgentSession.open(deps, await store.get(args.sessionId))
  : await AgentSession.create(deps, 'test system prompt');
const events = args.approved ? session.resume({ approved: args.approved }) : session.run(args.task);
for await (const event of events) process.stdout.write(`${JSON.stringify(event)}\n`);
process.stdout.write(`${JSON.stringify({ session: session.id })}\n`);
db.close();
