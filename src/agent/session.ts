import type { LlmClient } from '../llm/client.js';
import type { ChatMessage } from '../llm/types.js';
import type { PermissionPolicy } from '../permissions/policy.js';
import type { SessionRow, SessionStore } from '../store/sessions.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AgentEvent } from './events.js';
import { runAgent } from './loop.js';

export interface SessionDeps {
  store: SessionStore;
  llm: LlmClient;
  tools: ToolRegistry;
  policy: PermissionPolicy;
  workspace: string;
  maxIterations: number;
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

  static open(deps: SessionDeps, row: SessionRow): AgentSession {
    const session = new AgentSession(deps, row, deps.store.messages(row.id));
    for (const message of danglingResults(session.messages)) session.append(message);
    return session;
  }

  /** Runs the agent on `task` (or, with none, carries on from where the history stops). */
  async *run(task: string | undefined, signal?: AbortSignal): AsyncGenerator<AgentEvent> {
    const { store } = this.deps;
    if (task && !this.row.title) {
      this.row.title = task.replace(/\s+/g, ' ').trim().slice(0, 80);
      store.update(this.id, { title: this.row.title });
    }
    store.update(this.id, { status: 'active', model: this.deps.llm.model });
    let turnStarted = performance.now();
    for await (const event of runAgent({
      llm: this.deps.llm,
      tools: this.deps.tools,
      messages: this.messages,
      task,
      workspace: this.deps.workspace,
      policy: this.deps.policy,
      maxIterations: this.deps.maxIterations,
      contextWindow: this.deps.contextWindow,
      signal,
      session: this.toolSession,
      state: store.state(this.id),
      onMessage: (message) => store.appendMessage(this.id, message),
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
      if (event.type === 'done')
        store.update(this.id, { status: event.reason === 'error' ? 'error' : 'completed' });
      yield event;
    }
  }

  private append(message: ChatMessage): void {
    this.messages.push(message);
    this.deps.store.appendMessage(this.id, message);
  }
}

/**
 * A run killed between a model's tool calls and their results leaves calls without answers,
 * which servers reject. Each gets a result saying it was interrupted.
 */
function danglingResults(messages: ChatMessage[]): ChatMessage[] {
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const assistant = messages[last];
  if (assistant?.role !== 'assistant' || !assistant.tool_calls?.length) return [];
  const answered = new Set(
    messages.slice(last + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
  );
  return assistant.tool_calls
    .filter((call) => !answered.has(call.id))
    .map((call) => ({ role: 'tool', tool_call_id: call.id, content: `Error: ${INTERRUPTED}` }));
}
