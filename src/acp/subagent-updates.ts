import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { type SubagentEvent, shownCall } from '../agent/events.js';
import type { ToolCallViews } from './tool-calls.js';

/** A sub-agent's result shown in the editor is cut to this many characters: its session has it all. */
const RESULT_MAX_CHARS = 2000;

interface Child {
  name: string;
  /** The editor's id of the call that started it (`delegate`, `decompose`). */
  parentCall: string;
}

/**
 * A sub-agent's work as the editor follows it: a line in the starting call (`delegate`) when it
 * starts and when it ends, and each of its tool calls as a call of its own, titled with the
 * sub-agent's name, with its status, diffs and a cut result. Its text, reasoning and streamed
 * output stay in its own stored session, so a busy sub-agent does not flood the editor.
 */
export class SubagentUpdates {
  private readonly children = new Map<string, Child>();

  constructor(private readonly views: ToolCallViews) {}

  async map(event: SubagentEvent): Promise<SessionUpdate[]> {
    switch (event.type) {
      case 'subagent_start': {
        const parent = this.children.has(event.parentId)
          ? callKey(event.parentId, event.parentCallId)
          : event.parentCallId;
        const name = event.agent ?? 'sub-agent';
        this.children.set(event.id, { name, parentCall: parent });
        return [this.line(parent, `⤷ ${name} started: ${oneLine(event.objective)}`)];
      }
      case 'subagent_end': {
        const child = this.children.get(event.id);
        if (!child) return [];
        const mark = event.status === 'done' ? '✓' : event.status === 'partial' ? '◐' : '✗';
        return [
          this.line(child.parentCall, `${mark} ${child.name} ${event.status}: ${oneLine(event.summary)}`),
        ];
      }
      case 'subagent_event': {
        const child = this.children.get(event.id);
        const inner = event.event;
        if (!child) return [];
        if (inner.type === 'tool_call') {
          const call = shownCall(inner);
          const id = callKey(event.id, inner.call.id);
          const view = this.views.describe(call.name, call.arguments, inner.label);
          view.title = `${child.name}: ${view.title}`;
          await this.views.remember(id, view);
          this.views.subagentCall(inner.call.id, id);
          return [{ sessionUpdate: 'tool_call', ...this.views.started(id, view) }];
        }
        if (inner.type === 'tool_result') {
          const id = callKey(event.id, inner.callId);
          this.views.subagentCall(inner.callId, undefined);
          const shown = (inner.display ?? inner.output).slice(0, RESULT_MAX_CHARS);
          return [
            {
              sessionUpdate: 'tool_call_update',
              toolCallId: id,
              status: inner.ok ? 'completed' : 'failed',
              content: await this.views.finished(id, inner.ok, shown),
            },
          ];
        }
        return [];
      }
    }
  }

  /** One more line in the content of the call that started sub-agents. */
  private line(callId: string, text: string): SessionUpdate {
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: callId,
      status: 'in_progress',
      content: this.views.progress(callId, `${text}\n`),
    };
  }
}

/** Call ids repeat across sessions: a sub-agent's are kept apart by its session id. */
function callKey(sessionId: string, callId: string): string {
  return `${sessionId}:${callId}`;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
