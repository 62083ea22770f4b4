import type { ToolSchema } from '../types.js';
import { REASONING_CLOSERS, REASONING_OPENERS } from './channel-tokens.js';
import { splitChannels } from './channels.js';
import { HEADER_STARTS } from './harmony.js';
import { CALL_MARKERS, findToolCalls } from './index.js';
import type { FormatContext, ParsedCall } from './types.js';

export interface ReplyOptions {
  /** The tools sent with the request; none means no calls are looked for. */
  tools: readonly ToolSchema[];
  finishReason: string;
  /** The model's template is known (or was seen) to open reasoning in the prompt. */
  startInReasoning?: boolean;
}

export interface ParsedReply {
  /** The visible answer, call markup removed. */
  text: string;
  reasoning: string;
  calls: ParsedCall[];
  /** The output began inside reasoning the prompt opened: worth remembering for the next reply. */
  openedInPrompt: boolean;
}

/**
 * Reads a whole reply's content: reasoning, answer and calls. Decisions that need the end of the
 * reply are made here, where the whole content is known:
 * - A closer before any opener (and before any call) means the template opened the reasoning:
 *   everything before it is reasoning (DeepSeek-R1 distills, QwQ, Qwen3 on many servers).
 * - Reasoning never closed that holds call markup ends where the markup starts, and the call
 *   counts (Kimi-K2 calls inside its think, Qwen3.5 calling straight out of a prefilled think);
 *   markup that holds no call stays reasoning. A closed block's markup stays reasoning: the
 *   model was thinking about a call, not making it.
 * - Reasoning the caller expected to be open in the prompt that never closes, with no call and
 *   no max_tokens cut, was the answer after all (the template had thinking switched off).
 */
export function parseReply(content: string, options: ReplyOptions): ParsedReply {
  const opened = closerComesFirst(content);
  const implicit = options.startInReasoning === true || opened;
  let { text, reasoning, splitter } = splitChannels(content, { startInReasoning: implicit });
  let openedInPrompt = implicit && splitter.sawCloser;
  if (splitter.inReasoning && implicit && !splitter.sawCloser) {
    openedInPrompt = options.finishReason === 'length';
    if (!openedInPrompt) ({ text, reasoning } = splitChannels(content));
  }
  if (options.tools.length === 0) return { text, reasoning, calls: [], openedInPrompt };
  const ctx: FormatContext = {
    tools: new Map(options.tools.map((t) => [t.function.name, t.function])),
    finishReason: options.finishReason,
  };
  let found = findToolCalls(text, ctx);
  // Unclosed reasoning with call markup in it ends where the markup starts, if that holds a call.
  const marker = splitter.inReasoning ? firstMarker(content, splitter.reasoningStart) : -1;
  if (marker !== -1) {
    const head = splitChannels(content.slice(0, marker), { startInReasoning: implicit });
    const inner = findToolCalls(head.text + content.slice(marker), ctx);
    if (inner) {
      ({ reasoning } = head);
      found = inner;
      openedInPrompt = implicit;
    }
  }
  return {
    text: found ? found.text : text,
    reasoning,
    calls: found?.calls ?? [],
    openedInPrompt,
  };
}

/** Whether a reasoning closer comes before any opener and any call marker. */
function closerComesFirst(content: string): boolean {
  const closer = earliest(content, REASONING_CLOSERS, 0);
  if (closer === -1) return false;
  const other = earliest(content, [...CALL_MARKERS, ...REASONING_OPENERS, ...HEADER_STARTS], 0);
  return other === -1 || closer < other;
}

function firstMarker(content: string, from: number): number {
  return earliest(content, CALL_MARKERS, from);
}

function earliest(text: string, needles: readonly string[], from: number): number {
  let best = -1;
  for (const needle of needles) {
    const i = text.indexOf(needle, from);
    if (i !== -1 && (best === -1 || i < best)) best = i;
  }
  return best;
}

/**
 * Models whose chat templates write the reasoning opener into the prompt by default, so their
 * first reply starts mid-thought (llama.cpp's tests/test-chat.cpp calls these "forced open"). A
 * guess from the name, for the first reply only: after it, what the replies show decides, and a
 * reply that never closes its reasoning is taken as the answer.
 */
const OPENS_IN_PROMPT = /qwq|deepseek-r1|r1-distill|thinking|glm-4\.7|glm-z1|qwen3\.5|nemotron-3|minimax-m2/i;

export function templateOpensReasoning(model: string): boolean {
  return OPENS_IN_PROMPT.test(model);
}
