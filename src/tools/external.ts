import type { DeferredGroup } from './deferred/tool-index.js';
import type { AnyTool } from './types.js';

/**
 * Tools from outside Hearth (MCP servers) for one session: some offered in every request, the
 * rest behind the index. `close` stops whatever they started.
 */
export interface ExternalTools {
  readonly offered: AnyTool[];
  readonly deferred: DeferredGroup[];
  /** Each server's state, for /mcp, /status and doctor. */
  status(): ExternalServerStatus[];
  close(): Promise<void>;
}

export interface ExternalServerStatus {
  name: string;
  /** Where it is configured. */
  source: string;
  transport: 'stdio' | 'http';
  running: boolean;
  /** Tools known (listed now or cached); undefined when never listed. */
  tools?: number;
  offered: 'direct' | 'index';
  /** Why its last start or listing failed. */
  problem?: string;
}

/** One line per server: `fs  stdio  14 tools, offered directly, running`. */
export function describeServers(servers: readonly ExternalServerStatus[]): string[] {
  return servers.map((s) => {
    const tools = s.tools === undefined ? 'tools not listed yet' : `${s.tools} tools`;
    const offered = s.offered === 'direct' ? 'offered directly' : 'behind tool_search';
    const state = s.problem ? `failed: ${s.problem.split('\n')[0]}` : s.running ? 'running' : 'not started';
    return `${s.name}  ${s.transport}  ${tools}, ${offered}, ${state}  (${s.source})`;
  });
}
