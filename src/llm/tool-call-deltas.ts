import type { ToolCall } from './types.js';

interface PartialCall {
  id?: string;
  name: string;
  args: string;
}

/**
 * Streamed `tool_calls` deltas put back together, tolerating what local servers send: calls keyed
 * by index and split over many chunks, no index (the position in the chunk's array stands in),
 * arguments as an object, the name repeated in every chunk, a final chunk that repeats the whole
 * arguments already streamed, in the same or another spelling (some vLLM parsers), and argument
 * fragments with no name, no id and an index that starts nothing (some llama-server builds):
 * those continue the last call while its arguments are unfinished and are dropped otherwise.
 */
export class ToolCallDeltas {
  private readonly calls = new Map<number, PartialCall>();
  private dropped = 0;

  get size(): number {
    return this.calls.size;
  }

  push(raw: Record<string, unknown>, position: number): void {
    const index = typeof raw.index === 'number' ? raw.index : position;
    const fn = asRecord(raw.function);
    const name = typeof fn.name === 'string' ? fn.name : '';
    const id = typeof raw.id === 'string' ? raw.id : '';
    let call = this.calls.get(index);
    if (!call) {
      if (!name && !id) {
        const last = [...this.calls.values()].at(-1);
        if (last && typeof fn.arguments === 'string' && !isJsonObject(last.args)) last.args += fn.arguments;
        else if (fn.arguments !== undefined && fn.arguments !== '') this.dropped++;
        return;
      }
      call = { name: '', args: '' };
      this.calls.set(index, call);
    }
    if (id) call.id = id;
    if (name && call.name !== name) call.name += name;
    if (typeof fn.arguments === 'string') {
      call.args = merged(call.args, fn.arguments);
    } else if (fn.arguments && typeof fn.arguments === 'object') {
      call.args = JSON.stringify(fn.arguments);
    }
  }

  /**
   * The calls in index order, each with an id (`newId` for those the server gave none). Calls with
   * no name cannot be run and are left out; the warnings say what was dropped.
   */
  finish(newId: (i: number) => string): { calls: ToolCall[]; warnings: string[] } {
    const warnings: string[] = [];
    const calls: ToolCall[] = [];
    const sorted = [...this.calls.entries()].sort(([a], [b]) => a - b);
    for (const [, call] of sorted) {
      if (!call.name.trim()) {
        warnings.push('The model server sent a tool call without a name; it was ignored.');
        continue;
      }
      calls.push({
        id: call.id || newId(calls.length),
        name: call.name.trim(),
        arguments: call.args || '{}',
      });
    }
    if (this.dropped > 0) {
      warnings.push(`Ignored ${this.dropped} tool-call fragment(s) that belonged to no call.`);
    }
    return { calls, warnings };
  }
}

/**
 * The arguments so far with one more fragment. A fragment that starts with everything so far is a
 * cumulative resend; a whole object after a whole object is the final chunk repeating the
 * arguments in another spelling (vLLM's GLM-4.7 parser: its serving layer re-serialises them, and
 * the streamed text no longer matches). Neither is appended: two objects in a row are no JSON.
 */
function merged(args: string, fragment: string): string {
  if (args === '' || fragment.startsWith(args)) return fragment;
  if (fragment.trimStart().startsWith('{') && isJsonObject(args) && isJsonObject(fragment)) return fragment;
  return args + fragment;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

export function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
