/**
 * Output styles (LAO's `--output-style`, `output_style` in the config): how answers are shaped.
 * A style is one fixed line of the system prompt, so it holds for the whole session; `json` also
 * has the one-shot run end with one JSON result object on stdout (cli/run-task.ts).
 */
import type { OUTPUT_STYLES } from '../config/schema.js';

export type OutputStyle = (typeof OUTPUT_STYLES)[number];

const LINES: Record<OutputStyle, string> = {
  terse: 'Answer style: terse. Give the result only, in as few words as it takes; no preamble, no recap.',
  narrative:
    'Answer style: narrative. Explain your answer: what you did, why, what you found, and what is left.',
  json: 'Answer style: your final answer is returned inside a JSON result, so keep it plain text: no preamble.',
};

/** The system prompt's line for a style; none when unset. */
export function outputStyleLine(style: OutputStyle | undefined): string | undefined {
  return style ? LINES[style] : undefined;
}
