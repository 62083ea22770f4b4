import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { expandEnv, type McpServerSpec } from '../config/mcp-servers.js';
import { type Clock, systemClock } from '../util/clock.js';

export type { McpToolInfo };

/** Why a server could not be used, worded for the model and the user alike (no secrets: no env, no headers). */
export class McpServerError extends Error {
  override name = 'McpServerError';
  timedOut = false;
  /** The server is still starting: the start goes on, and a later use may find it ready. */
  starting = false;
}

export interface ConnectionOptions {
  /** Relative `cwd`s and servers without one start here. */
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** How long a use waits for a server that is starting (its start may go on longer: STARTING_LIMIT_MS). */
  startupTimeoutMs: number;
  callTimeoutMs: number;
  version: string;
  /** What the wait for a starting server runs on; the system clock by default. */
  clock?: Clock;
}

const STDERR_KEPT = 2000;

/**
 * How long a start may go on before the server is given up: a first `npx -y` or `uvx` run
 * downloads the server and its dependencies, which takes longer than a search should wait.
 */
const STARTING_LIMIT_MS = 5 * 60_000;

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
  /** The client of a start under way, so that stopping need not wait for it. */
  private starting: Client | undefined;
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
    const client = await this.ready(signal);
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
    const client = await this.ready(signal);
    return (await this.request(() =>
      client.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.options.callTimeoutMs,
      }),
    )) as CallToolResult;
  }

  /**
   * Starts the server if need be and waits for the whole start, however long: `hearth mcp test`,
   * and the hub's listing of a server whose start outlasted a search.
   */
  async started(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  /**
   * The started client, waiting for a start at most the startup timeout. A start that takes
   * longer goes on (a first run of `npx -y` downloads the server): the caller is told the server is
   * still starting, and a later use finds it ready.
   */
  private ready(signal?: AbortSignal): Promise<Client> {
    const starting = this.connect();
    const clock = this.options.clock ?? systemClock;
    return new Promise((resolve, reject) => {
      const done = () => {
        clock.clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
      };
      const timer = clock.setTimeout(() => {
        done();
        const seconds = Math.round(this.options.startupTimeoutMs / 1000);
        const error = new McpServerError(
          `MCP server "${this.name}" is still starting (no answer after ${seconds} s; a first start may be downloading it). Try again in a moment.`,
        );
        error.starting = true;
        reject(error);
      }, this.options.startupTimeoutMs);
      const aborted = () => {
        done();
        reject(signal!.reason);
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted, { once: true });
      starting.then(
        (client) => {
          done();
          resolve(client);
        },
        (err) => {
          done();
          reject(err);
        },
      );
    });
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
    if (this.closed) throw new McpServerError(`MCP server "${this.name}" is stopped.`);
    const client = new Client({ name: 'hearth', version: this.options.version });
    client.onclose = () => {
      this.exited ??= 'it closed the connection';
      this.pid = undefined;
    };
    this.starting = client;
    try {
      await client.connect(transport, {
        timeout: Math.max(STARTING_LIMIT_MS, this.options.startupTimeoutMs),
      });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw this.failure('could not be started', err);
    } finally {
      if (this.starting === client) this.starting = undefined;
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
    // A start under way is ended, not waited for: it may be minutes from done.
    await this.starting?.close().catch(() => undefined);
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
