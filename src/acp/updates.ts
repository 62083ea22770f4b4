import type { PlanEntry, SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import { type AgentEvent, type DoneEvent, shownCall } from '../agent/events.js';
import { readTodos } from '../tools/tracking/index.js';
import type { Todo } from '../tools/tracking/todo.js';
import type { SessionState } from '../tools/types.js';
import { SubagentUpdates } from './subagent-updates.js';
import type { ToolCallViews } from './tool-calls.js';

/**
 * Turns the one event stream into `session/update`s: text and reasoning stay apart, a call becomes
 * a `tool_call` that is updated as it runs and when it ends, a sub-agent's calls are shown as calls
 * of their own (subagent-updates.ts), usage fills the editor's context meter, and the todo list, whenever a call changed it, is sent whole as the plan.
 */
export class UpdateMapper {
  private todos = '';
  private readonly subagents: SubagentUpdates;

  constructor(
    private readonly views: ToolCallViews,
    private readonly state: () => SessionState,
  ) {
    this.todos = JSON.stringify(readTodos(state()));
    this.subagents = new SubagentUpdates(views);
  }

  async map(event: AgentEvent): Promise<SessionUpdate[]> {
    switch (event.type) {
      case 'text_delta':
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text } }];
      case 'reasoning_delta':
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.text } }];
      case 'tool_call': {
        const call = shownCall(event);
        const view = this.views.describe(call.name, call.arguments, event.label);
        await this.views.remember(event.call.id, view);
        return [{ sessionUpdate: 'tool_call', ...this.views.started(event.call.id, view) }];
      }
      case 'tool_progress':
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: event.callId,
            status: 'in_progress',
            content: this.views.progress(event.callId, event.output),
          },
        ];
      case 'tool_result': {
        const content = await this.views.finished(event.callId, event.ok, event.display ?? event.output);
        const update: SessionUpdate = {
          sessionUpdate: 'tool_call_update',
          toolCallId: event.callId,
          status: event.ok ? 'completed' : 'failed',
          content,
          rawOutput: { output: event.output },
        };
        return [update, ...this.planIfChanged()];
      }
      case 'usage':
        return event.contextWindow > 0
          ? [{ sessionUpdate: 'usage_update', used: event.contextUsed, size: event.contextWindow }]
          : [];
      case 'subagent_start':
      case 'subagent_event':
      case 'subagent_end':
        return this.subagents.map(event);
      default:
        return [];
    }
  }

  /** The todo list as the editor's plan, when it changed since last sent. */
  private planIfChanged(): SessionUpdate[] {
    const todos = readTodos(this.state());
    const now = JSON.stringify(todos);
    if (now === this.todos) return [];
    this.todos = now;
    return [planUpdate(todos)];
  }
}

export function planUpdate(todos: readonly Todo[]): SessionUpdate {
  const entries: PlanEntry[] = todos.map((todo) => ({
    content: todo.text,
    priority: 'medium',
    status: todo.status === 'done' ? 'completed' : todo.status,
  }));
  return { sessionUpdate: 'plan', entries };
}

/** How a run's end reads in ACP; `cancelled` when the editor cancelled it, whatever the run said. */
export function stopReason(done: DoneEvent | undefined, cancelled: boolean): StopReason {
  if (cancelled || done?.reason === 'aborted') return 'cancelled';
  if (done?.reason === 'max_iterations' || done?.reason === 'loop') return 'max_turn_requests';
  if (done?.reason === 'budget') return 'max_tokens';
  if (done?.reason === 'blocked') return 'refusal';
  return 'end_turn';
}
