import type { McpServerEntry } from '../config/mcp-servers.js';
import { estimateTokens } from '../llm/tokens.js';
import type { DeferredGroup } from '../tools/deferred/tool-index.js';
import type { ExternalServerStatus, ExternalTools } from '../tools/external.js';
import type { AnyTool } from '../tools/types.js';
import { closest } from '../util/levenshtein.js';
import { type ConnectionOptions, McpConnection, McpServerError, type McpToolInfo } from './connection.js';
import { ToolListCache } from './tool-cache.js';
import { mcpTool, mcpToolName, unlistedTool } from './tools.js';

export interface McpHubOptions extends ConnectionOptions {
  servers: McpServerEntry[];
  /** Where the tool lists are cached (the Hearth home). */
  userDir: string;
  /** Share of the context window the MCP tools' schemas may take before they go behind the index. */
  maxSchemaShare: number;
  contextWindow: number;
}

/**
 * The session's MCP servers: none runs until one of its tools is called or a search needs its
 * list. Tools whose lists are cached and whose schemas fit the share of the window are offered
 * directly; the rest wait behind the tool_search index. Stopped with the session (`close`).
 */
export class McpHub implements ExternalTools {
  private readonly connections = new Map<string, McpConnection>();
  private readonly known = new Map<string, AnyTool[]>();
  private readonly problems = new Map<string, string>();
  /** Servers whose slow start a listing waits for. */
  private readonly awaitingStart = new Set<string>();
  private direct = new Set<string>();

  private constructor(
    private readonly options: McpHubOptions,
    private readonly cache: ToolListCache,
  ) {
    for (const { name, spec } of options.servers) {
      const connection = new McpConnection(name, spec, options);
      this.connections.set(name, connection);
      const cached = cache.get(name, spec);
      if (cached)
        this.known.set(
          name,
          cached.map((info) => mcpTool(connection, info)),
        );
    }
    this.direct = this.fitting();
  }

  static async open(options: McpHubOptions): Promise<McpHub> {
    return new McpHub(options, await ToolListCache.open(options.userDir));
  }

  get offered(): AnyTool[] {
    return [...this.direct].flatMap((name) => this.known.get(name) ?? []);
  }

  get deferred(): DeferredGroup[] {
    return this.options.servers
      .filter(({ name }) => !this.direct.has(name))
      .map(({ name }) => ({
        group: `mcp ${name}`,
        describe: true,
        tools: () => this.known.get(name) ?? [],
        discover: (signal) => this.list(name, signal).then(() => this.problems.get(name)),
        unlisted: (tool) => this.unlisted(name, tool),
      }));
  }

  /**
   * A call by name of a tool of `server` while its tools are unknown (never listed, nothing
   * cached): the server is started and listed when the call runs, so the model need not search
   * first. The error names the server's tools when it has none of that name.
   */
  private unlisted(server: string, name: string): AnyTool | undefined {
    if (this.known.has(server) || !name.startsWith(mcpToolName(server, ''))) return undefined;
    return unlistedTool(name, async (signal) => {
      // Calls of one turn are all prepared before the first runs: the first lists it for the rest.
      if (!this.known.has(server)) await this.list(server, signal);
      const tools = this.known.get(server);
      if (!tools) return this.problems.get(server) ?? `MCP server "${server}" listed no tools.`;
      const tool = tools.find((t) => t.name === name);
      if (tool) return tool;
      const names = tools.map((t) => t.name);
      const close = closest(name, names);
      return `Unknown tool "${name}".${close ? ` Did you mean "${close}"?` : ''} MCP server "${server}" has: ${names.join(', ')}.`;
    });
  }

  /**
   * Starts the server (if need be) and lists its tools afresh, updating the cache. A server still
   * starting after the startup timeout is listed once its start is over, for the next search and
   * the next session; `patient` waits for that instead.
   */
  async list(
    name: string,
    signal?: AbortSignal,
    opts: { patient?: boolean } = {},
  ): Promise<McpToolInfo[] | undefined> {
    const connection = this.connections.get(name);
    const entry = this.options.servers.find((s) => s.name === name);
    if (!connection || !entry) return undefined;
    try {
      if (opts.patient) await connection.started();
      const tools = await connection.listTools(signal);
      this.problems.delete(name);
      this.known.set(
        name,
        tools.map((info) => mcpTool(connection, info)),
      );
      await this.cache.set(name, entry.spec, tools).catch(() => undefined);
      return tools;
    } catch (err) {
      this.problems.set(name, (err as Error).message);
      if (err instanceof McpServerError && err.starting) this.listOnceStarted(name, connection);
      return undefined;
    }
  }

  private listOnceStarted(name: string, connection: McpConnection): void {
    if (this.awaitingStart.has(name)) return;
    this.awaitingStart.add(name);
    connection
      .started()
      .then(
        () => this.list(name),
        (err: Error) => this.problems.set(name, err.message),
      )
      .finally(() => this.awaitingStart.delete(name));
  }

  /** The process id of a running stdio server. */
  pid(name: string): number | undefined {
    return this.connections.get(name)?.pid;
  }

  status(): ExternalServerStatus[] {
    return this.options.servers.map(({ name, spec, source }) => ({
      name,
      source,
      transport: 'url' in spec ? 'http' : 'stdio',
      running: this.connections.get(name)?.running ?? false,
      tools: this.known.get(name)?.length,
      offered: this.direct.has(name) ? 'direct' : 'index',
      ...(this.problems.has(name) ? { problem: this.problems.get(name) } : {}),
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }

  /** The servers whose cached schemas, all together, fit the share of the window; none if they do not. */
  private fitting(): Set<string> {
    const listed = this.options.servers.filter(({ name }) => this.known.has(name)).map((s) => s.name);
    const tokens = listed
      .flatMap((name) => this.known.get(name)!)
      .reduce((sum, tool) => sum + schemaTokens(tool), 0);
    const fits = tokens <= this.options.maxSchemaShare * this.options.contextWindow;
    return new Set(fits ? listed : []);
  }
}

function schemaTokens(tool: AnyTool): number {
  return estimateTokens(
    JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.jsonSchema }),
  );
}
