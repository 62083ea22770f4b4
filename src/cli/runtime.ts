import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { readProjectContext } from '../agent/project-context.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { hearthHome } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { PermissionGate } from '../permissions/gate.js';
import { parseRules } from '../permissions/rules.js';
import { createSandbox } from '../sandbox/select.js';
import type { SandboxChoice } from '../sandbox/types.js';
import { type Db, openDatabase } from '../store/database.js';
import { SessionStore } from '../store/sessions.js';
import { selectTools } from '../tools/catalog.js';
import { ToolRegistry } from '../tools/registry.js';

/** What every command needs, built once from the config at the edge. */
export interface Runtime {
  config: Config;
  workspace: string;
  tools: ToolRegistry;
  gate: PermissionGate;
  systemPrompt: string;
  openStore(): SessionStore;
  /** Created on first use: probing the backends costs a trial run. */
  sandbox(): Promise<SandboxChoice>;
  close(): Promise<void>;
}

export async function createRuntime(config: Config, workspaceDir: string): Promise<Runtime> {
  const workspace = await realpath(workspaceDir);
  const tools = new ToolRegistry(selectTools(config.tools));
  const { mode, allow, deny } = config.permissions;
  const gate = new PermissionGate(mode, { allow: parseRules(allow), deny: parseRules(deny) }, workspace);
  let db: Db | undefined;
  let sandbox: Promise<SandboxChoice> | undefined;
  return {
    config,
    workspace,
    tools,
    gate,
    systemPrompt: buildSystemPrompt({
      workspace,
      context: await readProjectContext(workspace),
      toolsInPrompt: config.native_tools === false ? tools.schemas() : undefined,
    }),
    openStore() {
      db ??= openDatabase(config.db_path ?? join(hearthHome(), 'hearth.db'));
      return new SessionStore(db);
    },
    sandbox() {
      const settings = config.sandbox;
      sandbox ??= createSandbox(settings.mode, {
        workspace,
        network: settings.network,
        envAllow: settings.env,
        memoryMb: settings.memory_mb,
        cpus: settings.cpus,
      });
      return sandbox;
    },
    async close() {
      db?.close();
      await (await sandbox?.catch(() => undefined))?.sandbox.dispose();
    },
  };
}
