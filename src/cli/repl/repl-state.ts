import { estimateHistoryTokens } from '../../agent/context-size.js';
import type { AgentEvent } from '../../agent/events.js';
import type { Runtime } from '../../agent/runtime.js';
import type { AgentSession } from '../../agent/session.js';
import { openSession, type SessionSetup } from '../../agent/session-setup.js';
import { probeModel } from '../../llm/probe.js';
import type { SessionRow, SessionStore, SessionSummary } from '../../store/sessions.js';
import { type Connection, contextOf } from '../connect.js';
import type { StatusFacts } from './status.js';

/** Token counts of the current session, kept up to date from its usage events. */
export interface SessionStats {
  prompt: number;
  completion: number;
  contextUsed: number;
}

/**
 * The REPL's state between turns: the server connection, the current session (started with
 * the first task, so a REPL opened and left stores nothing) and its token counts. /new,
 * /resume and /model change it; the session itself is assembled by `openSession`, exactly as
 * for a one-shot run.
 */
export class ReplState {
  private current: AgentSession | undefined;
  stats: SessionStats = { prompt: 0, completion: 0, contextUsed: 0 };

  constructor(private setup: SessionSetup) {}

  get runtime(): Runtime {
    return this.setup.runtime;
  }

  get connection(): Connection {
    return this.setup.connection;
  }

  get store(): SessionStore {
    return this.setup.runtime.openStore();
  }

  /** The current session, if one was started or resumed. */
  get session(): AgentSession | undefined {
    return this.current;
  }

  /** The current session, started now if there is none yet. */
  async ensureSession(): Promise<AgentSession> {
    this.current ??= await openSession(this.setup);
    return this.current;
  }

  /** Leaves the current session; the next task starts another. */
  startNew(): void {
    this.current = undefined;
    this.stats = { prompt: 0, completion: 0, contextUsed: 0 };
  }

  async resume(row: SessionRow): Promise<AgentSession> {
    this.current = await openSession(this.setup, row);
    const stored = this.summary(row.id);
    this.stats = {
      prompt: stored?.promptTokens ?? 0,
      completion: stored?.completionTokens ?? 0,
      contextUsed: estimateHistoryTokens(this.current.messages),
    };
    return this.current;
  }

  /**
   * Talks to another model of the same server from the next turn on. The session is opened
   * again around the new client: its history stays, though the server's prompt cache does not.
   */
  async useModel(model: string): Promise<Connection> {
    const { connection, runtime } = this.setup;
    const info = await probeModel(connection.baseUrl, model, {
      kind: connection.kind,
      apiKey: runtime.config.api_key,
    });
    const { contextNote: _previous, ...rest } = connection;
    const next: Connection = { ...rest, model, info, kind: info.kind, ...contextOf(runtime.config, info) };
    this.setup = { ...this.setup, connection: next };
    if (this.current) this.current = await openSession(this.setup, this.store.get(this.current.id));
    return next;
  }

  /** Keeps the counts current; called with every event of a turn. */
  record(event: AgentEvent): void {
    if (event.type !== 'usage') return;
    this.stats.prompt += event.prompt;
    this.stats.completion += event.completion;
    this.stats.contextUsed = event.contextUsed;
  }

  /** The store's figures for a session of this workspace (turns, tokens), when it has them. */
  summary(id: string): SessionSummary | undefined {
    return this.store.list({ workspace: this.runtime.workspace, limit: 1000 }).find((s) => s.id === id);
  }

  async statusFacts(): Promise<StatusFacts> {
    const sandbox = await this.runtime.sandbox();
    return {
      model: this.connection.model,
      contextUsed: this.stats.contextUsed,
      contextWindow: this.connection.contextWindow,
      tokens: this.stats.prompt + this.stats.completion,
      mode: this.runtime.gate.mode,
      sandbox: sandbox.sandbox.kind,
    };
  }
}
