import { isAbsolute } from 'node:path';
import {
  type AgentContext,
  agent,
  type ClientCapabilities,
  type McpServer,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type SessionInfo,
} from '@agentclientprotocol/sdk';
import type { Runtime } from '../agent/runtime.js';
import type { McpServerSpec } from '../config/mcp-servers.js';
import type { Connection } from '../llm/connection.js';
import { SessionNotFoundError } from '../store/rows.js';
import { editorFiles } from './client-files.js';
import type { SandboxedLauncher } from './client-terminal.js';
import { MODE_OPTION, MODEL_OPTION } from './config-options.js';
import { AcpSession } from './session.js';

/**
 * Builds the runtime and finds the model server for a workspace, with the editor's MCP servers
 * added; `model` replaces the configured one as `-m` would (a profile's name, or a model's).
 */
export type OpenWorkspace = (
  cwd: string,
  mcpServers: Record<string, McpServerSpec>,
  model?: string,
) => Promise<{ runtime: Runtime; connection: Connection; profile?: string }>;

export interface AcpAgentOptions {
  version: string;
  open: OpenWorkspace;
  /** How the editor's terminals run a command in Hearth's sandbox; unset: commands never go there. */
  launch?: SandboxedLauncher;
  /** Where logs go: never stdout, which carries the protocol. */
  log: (line: string) => void;
}

/** Sessions listed per page of `session/list`. */
const PAGE = 50;

/**
 * Hearth as an ACP agent over `input`/`output` (stdin/stdout): one process serves one editor, each
 * session in its own runtime (the editor's cwd is the workspace). Resolves when the editor closes
 * the connection; the stored sessions stay, resumable from the terminal or the editor.
 */
export async function serveAcp(
  options: AcpAgentOptions,
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
): Promise<void> {
  const sessions = new Map<string, AcpSession>();
  const runtimes = new Set<Runtime>();
  let capabilities: ClientCapabilities = {};
  let client: AgentContext | undefined;

  const open = async (cwd: string, servers: McpServer[], model?: string) => {
    if (!isAbsolute(cwd))
      throw RequestError.invalidParams(undefined, `cwd must be an absolute path, not "${cwd}".`);
    const opened = await options.open(cwd, mcpSpecs(servers, options.log), model).catch((err: Error) => {
      throw RequestError.internalError(undefined, err.message);
    });
    runtimes.add(opened.runtime);
    return opened;
  };
  const start = async (
    cwd: string,
    servers: McpServer[],
    id?: string,
    opened?: Awaited<ReturnType<typeof open>>,
  ): Promise<AcpSession> => {
    const { runtime, connection, profile } = opened ?? (await open(cwd, servers));
    const store = await runtime.sessions();
    const row = id === undefined ? undefined : await store.get(id).catch(notFound(id));
    const session = await AcpSession.open(
      {
        runtime,
        connection,
        client: client!,
        editor: editorFiles(client!, capabilities, () => session.id),
        log: options.log,
        launch: options.launch,
        capabilities,
        origin: { cwd, servers },
        profile,
      },
      row,
    );
    sessions.set(session.id, session);
    return session;
  };
  const find = (id: string): AcpSession => {
    const session = sessions.get(id);
    if (!session) throw RequestError.resourceNotFound(id);
    return session;
  };
  /**
   * Goes on with the session on another model: the workspace opened again as `-m MODEL` would (a
   * profile brings its own server and settings), the stored session reopened there in the same mode.
   */
  const switchModel = async (session: AcpSession, model: string): Promise<AcpSession> => {
    if (session.busy)
      throw RequestError.invalidRequest(undefined, 'Wait for the running prompt to end, or cancel it first.');
    const { cwd, servers } = session.parts.origin;
    const opened = await open(cwd, servers, model);
    const mode = session.parts.runtime.gate.mode;
    await session.close();
    runtimes.delete(session.parts.runtime);
    await session.parts.runtime.close();
    opened.runtime.gate.mode = mode;
    return start(cwd, servers, session.id, opened).catch((err: unknown) => {
      sessions.delete(session.id);
      throw err;
    });
  };
  const optionsChanged = (session: AcpSession) =>
    void session
      .send({ sessionUpdate: 'config_option_update', configOptions: session.configOptions })
      .catch(() => {});
  // The commands come once the editor knows the session, after the response.
  const announce = (session: AcpSession) =>
    void setImmediate(() => void session.send(session.commandsUpdate()).catch(() => {}));

  const app = agent({ name: 'hearth' })
    .onConnect((connection) => {
      client = connection.client;
    })
    .onRequest('initialize', ({ params }) => {
      capabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {} },
        },
        agentInfo: { name: 'hearth', title: 'Hearth', version: options.version },
        authMethods: [],
      };
    })
    .onRequest('session/new', async ({ params }) => {
      const session = await start(params.cwd, params.mcpServers);
      announce(session);
      return { sessionId: session.id, modes: session.modes, configOptions: session.configOptions };
    })
    .onRequest('session/load', async ({ params }) => {
      const session =
        sessions.get(params.sessionId) ?? (await start(params.cwd, params.mcpServers, params.sessionId));
      for (const update of session.history()) await session.send(update);
      announce(session);
      return { modes: session.modes, configOptions: session.configOptions };
    })
    .onRequest('session/list', async ({ params }) => {
      if (!params.cwd) throw RequestError.invalidParams(undefined, 'Give the cwd whose sessions to list.');
      const { runtime } = await open(params.cwd, []);
      const store = await runtime.sessions();
      const offset = Number(params.cursor ?? 0) || 0;
      const rows = await store.list({
        workspace: runtime.workspace,
        topLevel: true,
        limit: offset + PAGE + 1,
      });
      const page = rows.slice(offset, offset + PAGE);
      const listed: SessionInfo[] = page.map((row) => ({
        sessionId: row.id,
        cwd: row.workspace,
        title: row.title || null,
        updatedAt: new Date(row.updatedAt).toISOString(),
      }));
      return { sessions: listed, nextCursor: rows.length > offset + PAGE ? String(offset + PAGE) : null };
    })
    .onRequest('session/prompt', async ({ params }) => ({
      stopReason: await find(params.sessionId).prompt(params.prompt),
    }))
    .onRequest('session/set_mode', ({ params }) => {
      const session = find(params.sessionId);
      session.setMode(params.modeId);
      void session
        .send({ sessionUpdate: 'current_mode_update', currentModeId: params.modeId })
        .catch(() => {});
      optionsChanged(session);
      return {};
    })
    .onRequest('session/set_config_option', async ({ params }) => {
      let session = find(params.sessionId);
      const value = 'value' in params ? params.value : undefined;
      if (typeof value !== 'string')
        throw RequestError.invalidParams(undefined, `"${params.configId}" takes one of its listed values.`);
      if (params.configId === MODE_OPTION) {
        session.setMode(value);
        void session.send({ sessionUpdate: 'current_mode_update', currentModeId: value }).catch(() => {});
      } else if (params.configId === MODEL_OPTION) {
        const model = session.modelNamed(value);
        if (model) {
          session = await switchModel(session, model);
          announce(session);
        }
      } else {
        throw RequestError.invalidParams(
          undefined,
          `No option "${params.configId}". Options: ${MODE_OPTION}, ${MODEL_OPTION}.`,
        );
      }
      return { configOptions: session.configOptions };
    })
    .onNotification('session/cancel', ({ params }) => {
      sessions.get(params.sessionId)?.cancel();
    });

  const connection = app.connect(ndJsonStream(output, input));
  await connection.closed;
  // The editor is gone: stop what runs; what was said so far is stored, and the session resumable.
  await Promise.allSettled([...sessions.values()].map((session) => session.close()));
  await Promise.allSettled([...runtimes].map((runtime) => runtime.close()));
}

function notFound(id: string) {
  return (err: unknown): never => {
    if (err instanceof SessionNotFoundError) throw RequestError.resourceNotFound(id);
    throw err;
  };
}

/** The editor's MCP servers in Hearth's shape (config/mcp-servers.ts); SSE ones are said and left out. */
function mcpSpecs(servers: readonly McpServer[], log: (line: string) => void): Record<string, McpServerSpec> {
  const specs: Record<string, McpServerSpec> = {};
  for (const server of servers) {
    const name = server.name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40) || 'editor';
    if ('type' in server && server.type === 'sse') {
      log(`MCP server "${server.name}" was left out: Hearth speaks Streamable HTTP and stdio, not SSE.`);
    } else if ('type' in server && server.type === 'http') {
      const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
      specs[name] = { type: 'http', url: server.url, headers };
    } else if ('command' in server) {
      const env = Object.fromEntries(server.env.map((v) => [v.name, v.value]));
      specs[name] = { command: server.command, args: server.args, env };
    }
  }
  return specs;
}
