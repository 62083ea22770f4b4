import type { FormatContext, ParsedCall } from './types.js';

/** A call whose arguments stop before they end: never run, the model is told why and what to do. */
export function cutOffCall(name: string, ctx: FormatContext): ParsedCall {
  const why =
    ctx.finishReason === 'length'
      ? 'the reply reached its max_tokens limit'
      : 'the reply ended inside the call';
  return {
    name,
    arguments: '{}',
    problem: `Your ${name} call was cut off before its arguments were complete (${why}), so it was not run. Call it again with shorter arguments: split large content over several calls.`,
  };
}

/** A call in explicit markup whose arguments cannot be read as a JSON object. */
export function unreadableCall(name: string, detail: string): ParsedCall {
  return {
    name,
    arguments: '{}',
    problem: `Your ${name} call was not run: its arguments could not be read as a JSON object (${detail}). Call it again with the arguments as one JSON object.`,
  };
}
