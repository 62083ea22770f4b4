import type { LlmClient } from '../llm/client.js';
import type { ChatMessage } from '../llm/types.js';
import {
  readPlan,
  readTaskState,
  readTodos,
  renderPlan,
  renderTaskState,
  renderTodos,
} from '../tools/tracking/index.js';
import { truncateMiddle } from '../tools/truncate.js';
import type { SessionState } from '../tools/types.js';
import { estimateHistoryTokens } from './context-size.js';

export interface CompactionResult {
  /** The new history: system prompt, a summary (or trimmed old turns), then the recent turns verbatim. */
  history: ChatMessage[];
  before: number;
  after: number;
  method: 'summary' | 'trimmed';
}

export interface CompactionOptions {
  llm: LlmClient;
  state: SessionState;
  contextWindow: number;
  signal?: AbortSignal;
}

/** Share of the window the recent turns may keep verbatim. */
const KEEP_SHARE = 0.25;
/** Trimming stops once the history is this share of the window. */
const TRIM_TARGET_SHARE = 0.5;
const DROPPED = '[output dropped to save context]';

const SUMMARY_INSTRUCTIONS = `Summarize the conversation above for the agent that will continue it. It will see only your summary and the most recent turns. Be concrete and brief, under these headings:
Goal: what the user asked for, in their words where it matters.
Decisions: choices made and why.
Files touched: paths and what changed in each.
Current state: what is done and what works.
Next steps: what remains, in order.`;

/**
 * Shrinks a history that nears the context window. The older part is summarized by the model
 * into a structured note (goal, decisions, files, state, next steps); the recent turns stay
 * verbatim; todos, plan and task state are attached again. If summarizing fails, the oldest
 * tool outputs are dropped instead, never the user's messages. This is the one deliberate
 * break of the append-only history: the prompt cache starts afresh after it.
 */
export async function compactHistory(
  messages: ChatMessage[],
  opts: CompactionOptions,
): Promise<CompactionResult> {
  const before = estimateHistoryTokens(messages);
  const boundary = keepBoundary(messages, Math.floor(opts.contextWindow * KEEP_SHARE));
  if (boundary > 1) {
    const summary = await summarize(messages.slice(1, boundary), opts);
    if (summary) {
      const history: ChatMessage[] = [
        messages[0]!,
        { role: 'user', content: summaryMessage(messages, summary, opts.state) },
        ...messages.slice(boundary),
      ];
      return { history, before, after: estimateHistoryTokens(history), method: 'summary' };
    }
  }
  const history = dropOldToolOutputs(messages, Math.floor(opts.contextWindow * TRIM_TARGET_SHARE));
  return { history, before, after: estimateHistoryTokens(history), method: 'trimmed' };
}

/**
 * Index of the first message kept verbatim: the recent turns that fit `keepTokens`, moved back
 * so that tool results are never separated from the assistant message that called them.
 */
function keepBoundary(messages: ChatMessage[], keepTokens: number): number {
  let boundary = messages.length;
  let kept = 0;
  while (boundary > 2) {
    const size = estimateHistoryTokens([messages[boundary - 1]!]);
    if (kept + size > keepTokens && messages.length - boundary >= 2) break;
    kept += size;
    boundary--;
  }
  while (boundary > 1 && messages[boundary]?.role === 'tool') boundary--;
  return boundary;
}

async function summarize(older: ChatMessage[], opts: CompactionOptions): Promise<string | undefined> {
  // The request itself must fit: each old tool output is cut short, and the whole transcript too.
  const transcript = truncateMiddle(renderTranscript(older), Math.floor(opts.contextWindow * 0.6 * 3)).text;
  const request: ChatMessage[] = [
    { role: 'system', content: 'You write precise, compact summaries of an agent session.' },
    { role: 'user', content: `<conversation>\n${transcript}\n</conversation>\n\n${SUMMARY_INSTRUCTIONS}` },
  ];
  let text: string | undefined;
  for await (const event of opts.llm.stream({ messages: request, signal: opts.signal })) {
    if (event.type === 'done') text = event.message.content?.trim();
    if (event.type === 'error') return undefined;
  }
  return text || undefined;
}

function renderTranscript(messages: ChatMessage[]): string {
  return messages
    .map((m) => {
      if (m.role === 'tool') return `[tool result] ${truncateMiddle(m.content, 600).text}`;
      if (m.role === 'assistant') {
        const calls = (m.tool_calls ?? []).map(
          (c) => `[call ${c.function.name} ${c.function.arguments.slice(0, 300)}]`,
        );
        return [`[assistant] ${m.content ?? ''}`, ...calls].join('\n');
      }
      return `[${m.role}] ${m.content}`;
    })
    .join('\n');
}

function summaryMessage(messages: ChatMessage[], summary: string, state: SessionState): string {
  const task = messages.find((m) => m.role === 'user');
  const parts = ['[Earlier conversation, summarized to save context]'];
  if (task) parts.push(`Original request: ${truncateMiddle(task.content, 2000).text}`);
  parts.push(summary);
  parts.push(...trackedState(state));
  parts.push('Continue from here.');
  return parts.join('\n\n');
}

/** Todos, plan and task state, rendered for re-attaching after a compaction. */
function trackedState(state: SessionState): string[] {
  const out: string[] = [];
  const todos = readTodos(state);
  if (todos.length) out.push(`Todo list:\n${renderTodos(todos)}`);
  const plan = readPlan(state);
  if (plan) out.push(`Plan:\n${renderPlan(plan)}`);
  const task = readTaskState(state);
  if (Object.keys(task).length) out.push(`Task state: ${renderTaskState(task)}`);
  return out;
}

function dropOldToolOutputs(messages: ChatMessage[], targetTokens: number): ChatMessage[] {
  const history = [...messages];
  // The last few messages are what the model is working on: leave them alone.
  const protectedFrom = Math.max(1, history.length - 3);
  for (let i = 1; i < protectedFrom && estimateHistoryTokens(history) > targetTokens; i++) {
    const m = history[i]!;
    if (m.role === 'tool' && m.content !== DROPPED) history[i] = { ...m, content: DROPPED };
  }
  return history;
}
