import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { expandEnv, type McpServerSpec } from '../config/mcp-servers.js';

export type { McpToolInfo };

/** Why a server could not be used, worded for the model and the user alike (no secrets: no env, no headers). */
export class McpServerError extends Error {
  override name = 'McpServerError';
  timedOut = false;
}

export interface ConnectionOptions {
  /** Relative `cwd`s and servers without one start here. */
  workspace: string;
  env: NodeJS.ProcessEnv;
  startupTimeoutMs: number;
  callTimeoutMs: number;
  version: string;
}

const STDERR_KEPT = 2000;

/**
 * One MCP server, started on first use (the SDK, and the server's process, only then) and
 * started again on the next use after it crashed. The protocol (version negotiation, framing,
 * Streamable HTTP sessions) is the official SDK's; this class adds laziness, timeouts and
 * messages that say what went wrong.
 */
export class McpConnection {
  private client: Promise<Client> | undefined;
  private stderr = '';
  private exited: string | undefined;
  private closed = false;
  /** The running stdio server's process id, for status and tests. */
  pid: number | undefined;

  constructor(
    readonly name: string,
    private readonly spec: McpServerSpec,
    private readonly options: ConnectionOptions,
  ) {}

  get running(): boolean {
    return this.client !== undefined && this.exited === undefined;
  }

  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    const client = await this.connect();
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.request(() =>
        client.listTools(cursor ? { cursor } : undefined, { signal, timeout: this.options.startupTimeoutMs }),
      );
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const client = await this.connect();
    return (await this.request(() =>
      client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.options.callTimeoutMs,
      }),
    )) as CallToolResult;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  private connect(): Promise<Client> {
    if (this.closed) return Promise.reject(new McpServerError(`MCP server "${this.name}" is stopped.`));
    if (this.client && this.exited === undefined) return this.client;
    this.exited = undefined;
    this.stderr = '';
    const started = this.start();
    // A failed start is forgotten, so the next call tries again.
    started.catch(() => {
      if (this.client === started) this.client = undefined;
    });
    this.client = started;
    return started;
  }

  private async start(): Promise<Client> {
    let spec: McpServerSpec;
    try {
      spec = expandEnv(this.spec, this.options.env);
    } catch (err) {
      throw new McpServerError(
        `MCP server "${this.name}" is not configured right: ${(err as Error).message}.`,
      );
    }
    const [{ Client }, transport] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      this.transport(spec),
    ]);
    const client = new Client({ name: 'hearth', version: this.options.version });
    client.onclose = () => {
      this.exited ??= 'it closed the connection';
      this.pid = undefined;
    };
    try {
      await client.connect(transport, { timeout: this.options.startupTimeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw this.failure('could not be started', err);
    }
    return client;
  }

  private async transport(spec: McpServerSpec) {
    if ('url' in spec) {
      const { StreamableHTTPClientTransport } = await import(
        '@modelcontextprotocol/sdk/client/streamableHttp.js'
      );
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        throw new McpServerError(`MCP server "${this.name}" has an invalid url.`);
      }
      return new StreamableHTTPClientTransport(url, { requestInit: { headers: spec.headers } });
    }
    const { StdioClientTransport, getDefaultEnvironment } = await import(
      '@modelcontextprotocol/sdk/client/stdio.js'
    );
    const { resolve } = await import('node:path');
    // Only the variables a program needs to run (PATH, HOME, ...) and the server's own: the user's
    // other secrets stay out of a server that did not ask for them.
    const transport = new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: { ...getDefaultEnvironment(), ...spec.env },
      cwd: resolve(this.options.workspace, spec.cwd ?? '.'),
      stderr: 'pipe',
    });
    // What the server says on stderr is kept for error messages, never printed over the terminal.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.pid = transport.pid ?? undefined;
    };
    return transport;
  }

  /** Runs a request; a crash or timeout becomes an McpServerError that says which and why. */
  private async request<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      const failure = this.failure('failed', err);
      // A server that stopped answering is stopped, so the next call starts a fresh one.
      if (failure.timedOut) await this.drop();
      throw failure;
    }
  }

  private async drop(): Promise<void> {
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private failure(what: string, err: unknown): McpServerError {
    const message = err instanceof Error ? err.message : String(err);
    const timedOut = /timed out|timeout/i.test(message);
    const reason = timedOut
      ? `it did not answer in time (${message})`
      : this.exited
        ? `${this.exited} (${message})`
        : message;
    const tail = this.stderr.trim().split('\n').slice(-5).join('\n');
    const error = new McpServerError(
      `MCP server "${this.name}" ${what}: ${reason}.${tail ? `\nIts last output:\n${tail}` : ''}`,
    );
    error.timedOut = timedOut;
    return error;
  }
}
