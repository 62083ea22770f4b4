import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { hearthHome } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { type Db, openDatabase } from '../store/database.js';
import { SessionStore } from '../store/sessions.js';
import { selectTools } from '../tools/catalog.js';
import { ToolRegistry } from '../tools/registry.js';

/** What every command needs, built once from the config at the edge. */
export interface Runtime {
  config: Config;
  workspace: string;
  tools: ToolRegistry;
  systemPrompt: string;
  openStore(): SessionStore;
  close(): void;
}

export async function createRuntime(config: Config, workspaceDir: string): Promise<Runtime> {
  const workspace = await realpath(workspaceDir);
  const tools = new ToolRegistry(selectTools(config.tools));
  let db: Db | undefined;
  return {
    config,
    workspace,
    tools,
    systemPrompt: buildSystemPrompt({ workspace }),
    openStore() {
      db ??= openDatabase(config.db_path ?? join(hearthHome(), 'hearth.db'));
      return new SessionStore(db);
    },
    close() {
      db?.close();
    },
  };
}
