import { estimateHistoryTokens } from '../../agent/context-size.js';
import type { AgentEvent } from '../../agent/events.js';
import type { Runtime } from '../../agent/runtime.js';
import type { AgentSession } from '../../agent/session.js';
import { openSession, type SessionSetup } from '../../agent/session-setup.js';
import { hearthHome } from '../../config/sources.js';
import { knownServersIn } from '../../llm/known-servers.js';
import { probeModel } from '../../llm/probe.js';
import type { Speed } from '../../llm/types.js';
import type { SessionRow, SessionSummary } from '../../store/rows.js';
import type { SessionStorage } from '../../store/session-storage.js';
import { type Connection, contextOf, offloadCheckOf, resolveConnection, toolModeOf } from '../connect.js';
import type { StatusFacts } from './status.js';

/** Token counts of the current session, kept up to date from its usage events. */
export interface SessionStats {
  prompt: number;
  completion: number;
  contextUsed: number;
}

/** How a REPL session is made, less the connection, which may come later. */
export type ReplSetup = Omit<SessionSetup, 'connection'>;

/**
 * The REPL's state between turns: the server connection, the current session (started with
 * the first task, so a REPL opened and left stores nothing) and its token counts. /new,
 * /resume and /model change it; the session itself is assembled by `openSession`, exactly as
 * for a one-shot run.
 *
 * The REPL opens without a server (so /help, /sessions and /resume work): the connection is made
 * when a task needs it, and tried again on each task until a server answers.
 */
export class ReplState {
  private current: AgentSession | undefined;
  /** A session chosen with /resume before a server answered: opened with the first task. */
  private chosen: SessionRow | undefined;
  private conn: Connection | undefined;
  stats: SessionStats = { prompt: 0, completion: 0, contextUsed: 0 };
  /** How fast the last reply came, for the status line. */
  private lastSpeed: Speed | undefined;

  constructor(
    private setup: ReplSetup,
    connection?: Connection,
  ) {
    this.conn = connection;
  }

  get runtime(): Runtime {
    return this.setup.runtime;
  }

  /** Undefined until a server has answered. */
  get connection(): Connection | undefined {
    return this.conn;
  }

  /** The connection, made now if there is none yet; throws (ConnectionError) saying how to fix it. */
  async connect(): Promise<Connection> {
    this.conn ??= await resolveConnection(this.runtime.config, { known: knownServersIn(hearthHome()) });
    return this.conn;
  }

  /** Where the sessions are kept (SQLite or PostgreSQL). */
  sessions(): Promise<SessionStorage> {
    return this.setup.runtime.sessions();
  }

  /** The current session, if one was started or resumed. */
  get session(): AgentSession | undefined {
    return this.current;
  }

  /** The id of the session the next task goes to, when there is one. */
  get sessionId(): string | undefined {
    return this.current?.id ?? this.chosen?.id;
  }

  /** The current session, started (or the chosen one opened) now if there is none yet. */
  async ensureSession(): Promise<AgentSession> {
    if (!this.current) {
      const connection = await this.connect();
      this.current = await openSession({ ...this.setup, connection }, this.chosen);
      this.chosen = undefined;
    }
    return this.current;
  }

  /** Leaves the current session; the next task starts another. */
  async startNew(): Promise<void> {
    await this.leave();
    this.chosen = undefined;
    this.stats = { prompt: 0, completion: 0, contextUsed: 0 };
  }

  /** Continues a stored session: at once when a server answers, else with the next task. */
  async resume(row: SessionRow): Promise<void> {
    await this.leave();
    this.chosen = row;
    const [stored, messages] = await Promise.all([
      this.summary(row.id),
      this.sessions().then((store) => store.messages(row.id)),
    ]);
    this.stats = {
      prompt: stored?.promptTokens ?? 0,
      completion: stored?.completionTokens ?? 0,
      contextUsed: estimateHistoryTokens(messages),
    };
    if (this.conn) await this.ensureSession();
  }

  /**
   * Talks to another model of the same server from the next turn on. The session is opened
   * again around the new client: its history stays, though the server's prompt cache does not.
   */
  async useModel(model: string): Promise<Connection> {
    const connection = await this.connect();
    const { runtime } = this.setup;
    const info = await probeModel(connection.baseUrl, model, {
      kind: connection.kind,
      apiKey: runtime.config.api_key,
    });
    const { contextNote: _context, toolsNote: _tools, offload: _offload, ...rest } = connection;
    const next: Connection = {
      ...rest,
      model,
      info,
      kind: info.kind,
      ...contextOf(runtime.config, info),
      ...toolModeOf(runtime.config, info, model),
      ...offloadCheckOf(info, connection.baseUrl, model, runtime.config.api_key),
    };
    this.conn = next;
    if (this.current) {
      const row = await (await this.sessions()).get(this.current.id);
      await this.leave();
      this.current = await openSession({ ...this.setup, connection: next }, row);
    }
    return next;
  }

  /**
   * Works in another workspace from now on (`/project NAME`): the current session is left and the
   * next task starts one there, on the runtime and connection built for it. Returns the runtime
   * that was in use, for the caller to close.
   */
  async switchRuntime(runtime: Runtime, connection: Connection | undefined): Promise<Runtime> {
    await this.startNew();
    const previous = this.setup.runtime;
    this.setup = { ...this.setup, runtime };
    this.conn = connection;
    this.lastSpeed = undefined;
    return previous;
  }

  /** Ends the current session's tool processes (interpreters) and lets it go; at exit too. */
  async leave(): Promise<void> {
    const left = this.current;
    this.current = undefined;
    await left?.close();
  }

  /** Keeps the counts current; called with every event of a turn. */
  record(event: AgentEvent): void {
    if (event.type !== 'usage') return;
    this.lastSpeed = event.speed;
    this.stats.prompt += event.prompt;
    this.stats.completion += event.completion;
    this.stats.contextUsed = event.contextUsed;
  }

  /** The store's figures for a session of this workspace (turns, tokens), when it has them. */
  async summary(id: string): Promise<SessionSummary | undefined> {
    const rows = await (await this.sessions()).list({ workspace: this.runtime.workspace, limit: 1000 });
    return rows.find((s) => s.id === id);
  }

  async statusFacts(): Promise<StatusFacts> {
    const sandbox = await this.runtime.sandbox();
    return {
      model: this.conn?.model ?? 'no server',
      contextUsed: this.stats.contextUsed,
      contextWindow: this.conn?.contextWindow ?? 0,
      tokens: this.stats.prompt + this.stats.completion,
      mode: this.runtime.gate.mode,
      sandbox: sandbox.sandbox.kind,
      ...(this.lastSpeed ? { speed: this.lastSpeed } : {}),
    };
  }
}
