import type { SubagentEvent } from '../agent/events.js';
import { callRow, firstLine, formatTokens, oneLine, type Style } from './render.js';

/** A line about a sub-agent, with whose it is (for the REPL's folding). */
export interface SubagentLine {
  /** The sub-agent the line belongs to. */
  owner: string;
  text: string;
}

interface Known {
  name: string;
  depth: number;
  /** Who started it: undefined for a child of the session on screen. */
  parent?: string;
  calls: number;
}

/**
 * Shows sub-agents the way people follow them: a line when one starts, one per tool call it
 * finishes, its warnings, and a line when it ends with its status and summary, each indented by
 * its depth. Their text and reasoning stay in their own sessions (`hearth sessions show ID`): the
 * parent's answer is what the terminal is for. Events arrive already made visible (sanitize.ts).
 */
export class SubagentLines {
  private readonly known = new Map<string, Known>();
  /** Tool labels by child and call: call ids repeat across sessions. */
  private readonly labels = new Map<string, string>();

  constructor(private readonly style: Style) {}

  lines(event: SubagentEvent): SubagentLine[] {
    const { style } = this;
    switch (event.type) {
      case 'subagent_start': {
        const name = event.agent ?? 'sub-agent';
        const parent = this.known.has(event.parentId) ? event.parentId : undefined;
        this.known.set(event.id, { name, depth: event.depth, parent, calls: 0 });
        const task = event.taskId ? `${event.taskId} · ` : '';
        return [
          {
            owner: event.id,
            text: `${pad(event.depth - 1)}${style.cyan('⤷')} ${style.bold(name)} ${style.dim(event.id)} ${task}${oneLine(event.objective, 100)}`,
          },
        ];
      }
      case 'subagent_end': {
        const agent = this.known.get(event.id);
        const depth = agent?.depth ?? 1;
        const mark =
          event.status === 'done'
            ? style.green('✓')
            : event.status === 'partial'
              ? style.yellow('◐')
              : style.red('✗');
        const tokens = formatTokens(event.usage.prompt + event.usage.completion);
        const facts = style.dim(`· ${agent?.calls ?? 0} calls · ${tokens} tokens`);
        return [
          {
            owner: event.id,
            text: `${pad(depth - 1)}${mark} ${style.bold(agent?.name ?? 'sub-agent')} ${event.status}: ${firstLine(event.summary)} ${facts}`,
          },
        ];
      }
      case 'subagent_event': {
        const inner = event.event;
        const indent = pad(event.depth);
        if (inner.type === 'tool_call') {
          this.labels.set(`${event.id}:${inner.call.id}`, callRow(inner));
          const agent = this.known.get(event.id);
          if (agent) agent.calls++;
          return [];
        }
        if (inner.type === 'tool_result') {
          const label = this.labels.get(`${event.id}:${inner.callId}`) ?? inner.name;
          const status = inner.ok ? style.green('✓') : style.red('✗');
          const detail = inner.ok ? '' : ` ${style.red(firstLine(inner.output))}`;
          return [{ owner: event.id, text: `${indent}${status} ${style.cyan(label)}${detail}` }];
        }
        if (inner.type === 'warning')
          return [{ owner: event.id, text: `${indent}${style.yellow(`! ${inner.message}`)}` }];
        if (inner.type === 'retry')
          return [{ owner: event.id, text: `${indent}${style.yellow(`↻ ${inner.reason}; retrying`)}` }];
        return [];
      }
    }
  }

  /** What a running sub-agent is doing, for a status line; undefined when the event says nothing new. */
  status(event: SubagentEvent): string | undefined {
    if (event.type !== 'subagent_event') return undefined;
    const name = this.known.get(event.id)?.name ?? 'sub-agent';
    const inner = event.event;
    if (inner.type === 'turn_start') return `⤷ ${name} · waiting for the model (turn ${inner.turn})`;
    if (inner.type === 'tool_call')
      return `⤷ ${name} · running ${this.labels.get(`${event.id}:${inner.call.id}`)}`;
    return undefined;
  }

  /** True when `id` is `ancestor` or was started, at any depth, by it. */
  descends(id: string, ancestor: string): boolean {
    for (let at: string | undefined = id; at !== undefined; at = this.known.get(at)?.parent) {
      if (at === ancestor) return true;
    }
    return false;
  }
}

function pad(depth: number): string {
  return '  '.repeat(Math.max(0, depth));
}
