import { bareJsonFormat, fencedFormat, wrappedJsonFormat } from './ambiguous.js';
import { deepseekFormat } from './deepseek.js';
import { functionGemmaFormat, gemmaFormat } from './gemma.js';
import { harmonyFormat } from './harmony.js';
import { kimiFormat } from './kimi.js';
import { mistralFormat } from './mistral.js';
import { barePythonFormat, lfm2Format, llama4Format, olmo3Format, pythonTagFormat } from './pythonic.js';
import { taggedFormat } from './tagged.js';
import type { CallFormat, FormatContext, Found, ParsedCall } from './types.js';
import {
  apertusFormat,
  aprielFormat,
  commandRFormat,
  functoolsFormat,
  graniteFormat,
  lmStudioFormat,
  nemotronFormat,
} from './wrapped.js';
import { dsmlFormat, minimaxFormat } from './xml-calls.js';

/** Families whose markers no prose contains; all are tried and their spans merged by position. */
const EXPLICIT: readonly CallFormat[] = [
  taggedFormat,
  mistralFormat,
  deepseekFormat,
  dsmlFormat,
  kimiFormat,
  harmonyFormat,
  minimaxFormat,
  gemmaFormat,
  functionGemmaFormat,
  lfm2Format,
  olmo3Format,
  llama4Format,
  pythonTagFormat,
  graniteFormat,
  functoolsFormat,
  nemotronFormat,
  commandRFormat,
  apertusFormat,
  aprielFormat,
  lmStudioFormat,
];

/** Families that could be prose: tried in order, only when no explicit markup holds a call. */
const AMBIGUOUS: readonly CallFormat[] = [wrappedJsonFormat, fencedFormat, bareJsonFormat, barePythonFormat];

/** Every family's name, for the tests that must cover each one (a cut-off call in every format). */
export const FORMAT_NAMES: readonly string[] = [...EXPLICIT, ...AMBIGUOUS].map((f) => f.name);

/** Strings that begin explicit call markup: text from one on is markup, never shown as the answer. */
export const CALL_MARKERS: readonly string[] = [...new Set(EXPLICIT.flatMap((f) => f.markers))];

export interface FoundCalls {
  calls: ParsedCall[];
  /** The text with the call markup removed, trimmed. */
  text: string;
}

/** Tool calls written in the text, in any format a local model writes them; null when there are none. */
export function findToolCalls(text: string, ctx: FormatContext): FoundCalls | null {
  let spans = withoutOverlaps(EXPLICIT.flatMap((format) => format.find(text, ctx)));
  for (const format of AMBIGUOUS) {
    if (spans.length > 0 || ctx.tools.size === 0) break;
    spans = format.find(text, ctx);
  }
  if (spans.length === 0) return null;
  return { calls: spans.flatMap((s) => s.calls), text: removeSpans(text, spans) };
}

/** Earliest first; a span inside or across one already taken is dropped. */
function withoutOverlaps(spans: Found[]): Found[] {
  const kept: Found[] = [];
  for (const span of [...spans].sort((a, b) => a.start - b.start || b.end - a.end)) {
    const last = kept.at(-1);
    if (!last || span.start >= last.end) kept.push(span);
  }
  return kept;
}

/** Cut the call markup out; the prose around each call is kept, a blank line between the parts. */
function removeSpans(text: string, spans: readonly Found[]): string {
  const parts: string[] = [];
  let pos = 0;
  for (const span of spans) {
    parts.push(text.slice(pos, span.start).trim());
    pos = Math.max(pos, span.end);
  }
  parts.push(text.slice(pos).trim());
  // A call the model wrapped in a fence leaves the fence's two halves on either side of the cut.
  for (let i = 0; i + 1 < parts.length; i++) {
    const before = parts[i] ?? '';
    const after = parts[i + 1] ?? '';
    const open = /(^|\n)```[^\n`]*$/.exec(before);
    if (open && after.startsWith('```')) {
      parts[i] = before.slice(0, open.index).trim();
      parts[i + 1] = after.slice(3).trim();
    }
  }
  return parts.filter((p) => p.length > 0).join('\n\n');
}

export type { FormatContext, ParsedCall } from './types.js';
