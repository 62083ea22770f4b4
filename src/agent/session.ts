import type { LlmClient } from '../llm/client.js';
import type { ChatMessage, ToolCall } from '../llm/types.js';
import type { ApprovalAnswer, Approver, PermissionGate } from '../permissions/gate.js';
import type { Sandbox } from '../sandbox/types.js';
import type { SessionRow, SessionStore } from '../store/sessions.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AgentEvent } from './events.js';
import { runAgent, unansweredCalls } from './loop.js';

export interface SessionDeps {
  store: SessionStore;
  llm: LlmClient;
  tools: ToolRegistry;
  gate: PermissionGate;
  sandbox: Sandbox;
  /** Unset: calls that need an answer pause the run (see `pending` and `resume`). */
  approve?: Approver;
  workspace: string;
  maxIterations: number;
  tokenBudget?: number;
  todoNudges?: number;
  contextWindow?: number;
}

const INTERRUPTED =
  'Interrupted: this call did not finish (the previous run stopped). Check its effect before retrying.';

/**
 * A conversation kept in the store: every message is committed as it is appended, so a
 * killed process leaves a session that resumes from its last committed message.
 */
export class AgentSession {
  private readonly toolSession = new Map<string, unknown>();

  private constructor(
    private readonly deps: SessionDeps,
    readonly row: SessionRow,
    readonly messages: ChatMessage[],
  ) {}

  get id(): string {
    return this.row.id;
  }

  static create(deps: SessionDeps, systemPrompt: string): AgentSession {
    const row = deps.store.create({ workspace: deps.workspace, model: deps.llm.model });
    const session = new AgentSession(deps, row, []);
    session.append({ role: 'system', content: systemPrompt });
    return session;
  }

  /**
   * Opens a stored session. Calls left without results by a crash are answered as interrupted
   * (servers reject a history with unanswered calls); those of a paused run stay pending.
   */
  static open(deps: SessionDeps, row: SessionRow): AgentSession {
    const session = new AgentSession(deps, row, deps.store.messages(row.id));
    if (row.status !== 'paused') {
      for (const call of unansweredCalls(session.messages)) {
        session.append({ role: 'tool', tool_call_id: call.id, content: `Error: ${INTERRUPTED}` });
      }
    }
    return session;
  }

  /** Calls waiting for approval, when the last run paused. */
  get pending(): ToolCall[] {
    return this.row.status === 'paused' ? unansweredCalls(this.messages) : [];
  }

  /** Runs the agent on `task` (or, with none, carries on from where the history stops). */
  run(task: string | undefined, signal?: AbortSignal): AsyncGenerator<AgentEvent> {
    return this.drive(task, signal, undefined);
  }

  /** Continues a paused run: the listed calls run, the other pending ones are declined. */
  resume(
    decisions: { approved: string[]; reason?: string },
    signal?: AbortSignal,
  ): AsyncGenerator<AgentEvent> {
    const approved = new Set(decisions.approved);
    const answers = new Map<string, ApprovalAnswer>(
      this.pending.map((call) => [
        call.id,
        approved.has(call.id) ? { decision: 'once' } : { decision: 'deny', reason: decisions.reason },
      ]),
    );
    return this.drive(undefined, signal, answers);
  }

  private async *drive(
    task: string | undefined,
    signal: AbortSignal | undefined,
    answers: ReadonlyMap<string, ApprovalAnswer> | undefined,
  ): AsyncGenerator<AgentEvent> {
    const { store } = this.deps;
    if (task && !this.row.title) {
      this.row.title = task.replace(/\s+/g, ' ').trim().slice(0, 80);
      store.update(this.id, { title: this.row.title });
    }
    this.setStatus('active');
    let turnStarted = performance.now();
    for await (const event of runAgent({
      ...this.deps,
      messages: this.messages,
      task,
      answers,
      signal,
      session: this.toolSession,
      state: store.state(this.id),
      onMessage: (message) => store.appendMessage(this.id, message),
      onAudit: (entry) => store.recordAudit(this.id, entry),
    })) {
      if (event.type === 'turn_start') turnStarted = performance.now();
      if (event.type === 'usage') {
        store.recordUsage(this.id, {
          model: this.deps.llm.model,
          prompt: event.prompt,
          completion: event.completion,
          durationMs: performance.now() - turnStarted,
        });
      }
      if (event.type === 'done') {
        this.setStatus(
          event.reason === 'paused' ? 'paused' : event.reason === 'error' ? 'error' : 'completed',
        );
      }
      yield event;
    }
  }

  private setStatus(status: SessionRow['status']): void {
    this.row.status = status;
    this.deps.store.update(this.id, { status, model: this.deps.llm.model });
  }

  private append(message: ChatMessage): void {
    this.messages.push(message);
    this.deps.store.appendMessage(this.id, message);
  }
}
