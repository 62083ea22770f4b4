import { DEFAULT_CONTEXT_WINDOW } from './probe.js';
import { ESTIMATE_MARGIN, estimateTokens } from './tokens.js';

/**
 * Share of the context window one typed or pasted input may take: the system prompt, the tools
 * and the reply need the rest.
 */
const INPUT_SHARE = 0.75;

/**
 * Why `text` (a task, a pasted message) cannot be sent to a model with this context window, or
 * undefined when it fits. Checked where input enters (the one-shot task, the REPL, the gateway), so
 * a 10 MB paste is refused with advice before a request that cannot fit is built and sent.
 */
export function oversizedInput(text: string, contextWindow: number | undefined): string | undefined {
  const window = contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  const room = Math.floor(window * INPUT_SHARE);
  // A token holds at least one character but in rare scripts: most text is cleared without counting.
  if (text.length <= room) return undefined;
  const tokens = Math.ceil(estimateTokens(text) * ESTIMATE_MARGIN);
  if (tokens <= room) return undefined;
  return (
    `This message is about ${tokens.toLocaleString('en')} tokens (${text.length.toLocaleString('en')} characters); ` +
    `the model's context window is ${window.toLocaleString('en')} tokens, so it was not sent. ` +
    'Save the text to a file in the workspace and ask for it to be read in parts (the file tools read a range of lines at a time), ' +
    'or use a model with a larger context_window.'
  );
}
