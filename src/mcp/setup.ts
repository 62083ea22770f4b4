import { loadMcpServers } from '../config/mcp-servers.js';
import type { Config } from '../config/schema.js';
import { version } from '../util/version.js';
import { McpHub } from './hub.js';

/**
 * When the context window is not configured, the schema share is taken of this: the tools are
 * chosen before the server is probed, and a wrong guess here only means more tools behind the index.
 */
const ASSUMED_WINDOW = 16_384;

/** The session's MCP servers from every place they are configured; undefined when there are none. */
export async function openMcpHub(
  config: Config,
  workspace: string,
  userDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ hub: McpHub | undefined; notes: string[] }> {
  const { servers, notes } = await loadMcpServers({
    workspace,
    userDir,
    fromConfig: config.mcp.servers,
    configSource: 'the config (mcp.servers)',
  });
  if (servers.length === 0) return { hub: undefined, notes };
  const hub = await McpHub.open({
    servers,
    userDir,
    workspace,
    env,
    version,
    startupTimeoutMs: config.mcp.startup_timeout * 1000,
    callTimeoutMs: config.mcp.timeout * 1000,
    maxSchemaShare: config.mcp.max_schema_share,
    contextWindow: config.context_window ?? ASSUMED_WINDOW,
  });
  return { hub, notes };
}
