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
import { messageCap } from './context-budget.js';
import { estimateHistoryTokens } from './context-size.js';

export interface CompactionResult {
  /** The new history: system prompt, a summary (or elided old outputs), then the recent turns verbatim. */
  history: ChatMessage[];
  before: number;
  after: number;
  /**
   * `elided`: old tool outputs the model had acted on became one-line notes (no model call);
   * `summary`: the older part was summarized by the model; `trimmed`: old outputs were dropped
   * (and messages too large for the window cut short) because summarizing failed or would not have
   * helped; `none`: nothing could be made smaller.
   */
  method: 'elided' | 'summary' | 'trimmed' | 'none';
}

interface CompactionOptions {
  llm: LlmClient;
  state: SessionState;
  contextWindow: number;
  /**
   * Tokens the server counts beyond the messages (tool schemas, the template), which compaction
   * cannot shrink: the target leaves room for them, so that what triggered a compaction is measured
   * the same way as what it must reach.
   */
  overhead?: number;
  signal?: AbortSignal;
  /** Asked for by the user (/compact): summarize even when shortening old outputs would have done. */
  summarize?: boolean;
}

/** How each method is told to a person. */
export const COMPACTION_METHODS: Record<CompactionResult['method'], string> = {
  elided: 'old tool outputs shortened to one-line notes',
  summary: 'older turns summarized',
  trimmed: 'old tool outputs dropped or cut short',
  none: 'nothing could be made smaller; the conversation is unchanged',
};

/** Share of the window the recent turns may keep verbatim. */
const KEEP_SHARE = 0.25;
/** Compaction aims to bring the history down to this share of the window. */
const TARGET_SHARE = 0.5;
/** The user's own words kept verbatim after a compaction may take this share of the window. */
const REQUESTS_SHARE = 0.2;
/** Tool outputs shorter than this are left as they are: their note would save nothing. */
const ELIDE_MIN_CHARS = 400;
const DROPPED = '[output dropped to save context]';
const SUMMARY_HEADER = '[Earlier conversation, summarized to save context]';
const REQUESTS_KEY = 'compaction.requests';

const SUMMARY_INSTRUCTIONS = `Summarize the conversation above for the agent that will continue it. It will see only your summary, the user's requests and the most recent turns. Be concrete and brief, under these headings:
Decisions: choices made and why.
Files touched: paths and what changed in each.
Current state: what is done and what works.
Next steps: what remains, in order.`;

/**
 * Remembers a message the user wrote (a task, a message sent during a run), so that compaction can
 * keep the user's own words verbatim however many times the conversation is compacted.
 */
export function rememberRequest(state: SessionState, text: string): void {
  const known = (state.get(REQUESTS_KEY) as string[] | undefined) ?? [];
  state.set(REQUESTS_KEY, [...known, text]);
}

/**
 * Shrinks a history that nears the context window, cheapest first. Old tool outputs the model has
 * already acted on become one-line notes; only if that is not enough is the older part summarized by
 * the model (an extra request, slow on local hardware). The user's requests stay verbatim and the
 * current todo list, plan and task state are attached again; earlier copies of them are not carried
 * over. A compaction never makes the history bigger: when it would, nothing changes. This is the one
 * deliberate break of the append-only history: the prompt cache starts afresh after it.
 */
export async function compactHistory(
  messages: ChatMessage[],
  opts: CompactionOptions,
): Promise<CompactionResult> {
  const before = estimateHistoryTokens(messages);
  const target = Math.max(0, Math.floor(opts.contextWindow * TARGET_SHARE) - (opts.overhead ?? 0));
  const boundary = keepBoundary(messages, Math.floor(opts.contextWindow * KEEP_SHARE));
  // What is kept verbatim must fit too: a message larger than any one may be is cut short.
  const withinWindow = (history: ChatMessage[]) =>
    estimateHistoryTokens(history) <= target
      ? history
      : cutOversized(history, messageCap(opts.contextWindow));
  const result = (history: ChatMessage[], method: CompactionResult['method']): CompactionResult => {
    const after = estimateHistoryTokens(history);
    return after < before
      ? { history, before, after, method }
      : { history: messages, before, after: before, method: 'none' };
  };

  const elided = elideActedOn(messages, boundary);
  if (!opts.summarize && estimateHistoryTokens(elided) <= target) return result(elided, 'elided');

  // Only turns the model took are worth a summary: a lone request summarized only grows.
  if (messages.slice(1, boundary).some((m) => m.role === 'assistant')) {
    const summary = await summarize(messages.slice(1, boundary), opts);
    if (summary) {
      const history = withinWindow([
        messages[0]!,
        { role: 'user', content: summaryMessage(summary, opts) },
        ...messages.slice(boundary),
      ]);
      if (estimateHistoryTokens(history) < before) return result(history, 'summary');
    }
  }
  return result(withinWindow(dropOldToolOutputs(elided, target)), 'trimmed');
}

/**
 * Index of the first message kept verbatim: the recent turns that fit `keepTokens`, moved so that
 * tool results are never separated from the assistant message that called them: back (keeping the
 * call verbatim), or forward when going back would leave no turn of the model's to summarize.
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
  let back = boundary;
  while (back > 1 && messages[back]?.role === 'tool') back--;
  if (messages.slice(1, back).some((m) => m.role === 'assistant')) return back;
  let forward = boundary;
  while (forward < messages.length - 1 && messages[forward]?.role === 'tool') forward++;
  return messages[forward]?.role === 'tool' ? back : forward;
}

/**
 * Long tool outputs before `boundary` become one line each: the model has read them and answered
 * since, and the call that produced them is still in the history, so it can run it again.
 */
function elideActedOn(messages: ChatMessage[], boundary: number): ChatMessage[] {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  }
  return messages.map((m, i) => {
    if (i >= boundary || m.role !== 'tool' || m.content.length < ELIDE_MIN_CHARS) return m;
    const lines = m.content.split('\n').length;
    const first = m.content.split('\n', 1)[0]!.slice(0, 100);
    const name = names.get(m.tool_call_id) ?? 'the call';
    return {
      ...m,
      content: `[output of ${name} elided to save context: ${lines} lines, starting "${first}". Call it again if you need it.]`,
    };
  });
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
      // An earlier summary goes in without the requests and state it carried: they are attached fresh.
      if (m.role === 'user' && m.content.startsWith(SUMMARY_HEADER))
        return `[earlier summary] ${summaryPart(m.content)}`;
      return `[${m.role}] ${m.content}`;
    })
    .join('\n');
}

const SUMMARY_OPEN = '<summary>\n';
const SUMMARY_CLOSE = '\n</summary>';

function summaryPart(content: string): string {
  const start = content.indexOf(SUMMARY_OPEN);
  const end = content.indexOf(SUMMARY_CLOSE);
  return start >= 0 && end > start ? content.slice(start + SUMMARY_OPEN.length, end) : content;
}

function summaryMessage(summary: string, opts: CompactionOptions): string {
  const parts = [SUMMARY_HEADER];
  const requests = userRequests(opts.state, Math.floor(opts.contextWindow * REQUESTS_SHARE * 3.5));
  if (requests) parts.push(requests);
  parts.push(`${SUMMARY_OPEN}${summary}${SUMMARY_CLOSE}`);
  parts.push(...trackedState(opts.state));
  parts.push('Continue from here.');
  return parts.join('\n\n');
}

/**
 * The user's requests in their own words: the first always whole, then as many of the latest as fit
 * `maxChars`; the ones in between are counted, so the model knows some were left out.
 */
function userRequests(state: SessionState, maxChars: number): string | undefined {
  const all = (state.get(REQUESTS_KEY) as string[] | undefined) ?? [];
  if (all.length === 0) return undefined;
  const [whole, ...rest] = all;
  const first = truncateMiddle(whole!, maxChars).text;
  const shown = [`1. ${first}`];
  let room = maxChars - first.length;
  const latest: string[] = [];
  for (let i = rest.length - 1; i >= 0 && rest[i]!.length <= room; i--) {
    latest.unshift(`${i + 2}. ${rest[i]}`);
    room -= rest[i]!.length;
  }
  const skipped = rest.length - latest.length;
  if (skipped > 0)
    shown.push(`(${skipped} earlier message${skipped === 1 ? '' : 's'} from the user left out)`);
  return `The user's requests, verbatim:\n${[...shown, ...latest].join('\n')}`;
}

/** The current todos, plan and task state, rendered for re-attaching after a compaction. */
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

/**
 * Tool outputs and replies longer than `maxChars` (kept from before the window was known to be
 * smaller, or from before replies were capped) keep their start and end. The user's own words stay.
 */
function cutOversized(messages: ChatMessage[], maxChars: number): ChatMessage[] {
  const hint = 'cut to fit the context window';
  return messages.map((m) => {
    if ((m.role !== 'tool' && m.role !== 'assistant') || (m.content ?? '').length <= maxChars) return m;
    return { ...m, content: truncateMiddle(m.content ?? '', maxChars, { hint }).text };
  });
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
