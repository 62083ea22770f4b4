import type { Approver } from '../../permissions/gate.js';
import { askApproval } from '../approval-prompt.js';
import type { Style } from '../render.js';
import type { LineEditor } from './input.js';
import type { TurnRunner } from './turn.js';

/**
 * Approval questions in the REPL: the same question and diff preview as a one-shot run, read
 * with the REPL's own line editor (which owns the keyboard). Ctrl+C at the question declines
 * the call and cancels the turn, as Ctrl+C anywhere else in a turn does.
 */
export function replApprover(options: {
  editor: LineEditor;
  turns: TurnRunner;
  err: NodeJS.WriteStream;
  style: Style;
}): Approver {
  const { editor, turns, err, style } = options;
  return async (request, signal) => {
    turns.asking();
    const answer = await askApproval(request, signal, {
      style,
      write: (text) => err.write(text),
      choose: async (question, keys, cancel) => {
        const result = await editor.choose(question, keys, cancel);
        if (result.kind === 'key') return result.key;
        if (result.kind === 'interrupt' && !cancel.aborted) turns.interrupt();
        return undefined;
      },
      ask: async (question, cancel) => {
        const result = await editor.question(question, cancel);
        if (result.kind === 'line') return result.text;
        if (result.kind === 'interrupt' && !cancel.aborted) turns.interrupt();
        return undefined;
      },
    });
    turns.answered(answer);
    return answer;
  };
}
