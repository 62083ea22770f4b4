import { createInterface } from 'node:readline/promises';
import type { Approver } from '../permissions/gate.js';
import type { Style } from './render.js';

/**
 * Asks at the terminal: y (once), a (always, for similar calls this session), n (no, with an
 * optional reason for the model). Reads a line, so it works over SSH, in tmux and with pastes.
 */
export function terminalApprover(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  style: Style,
): Approver {
  return async (request, signal) => {
    const rl = createInterface({ input, output, terminal: input.isTTY === true });
    try {
      output.write(`\n${style.yellow('?')} ${style.cyan(request.summary)}\n  ${style.dim(request.reason)}\n`);
      for (;;) {
        const answer = (await rl.question('  Allow? [y]es once / [a]lways / [n]o: ', { signal }))
          .trim()
          .toLowerCase();
        if (answer === 'y' || answer === 'yes') return { decision: 'once' };
        if (answer === 'a' || answer === 'always') return { decision: 'always' };
        if (answer === 'n' || answer === 'no') {
          const reason = (await rl.question('  Reason for the model (optional): ', { signal })).trim();
          return { decision: 'deny', reason: reason ? `the user said no: "${reason}"` : 'the user said no' };
        }
      }
    } catch {
      return { decision: 'deny', reason: 'the user cancelled' };
    } finally {
      rl.close();
    }
  };
}

/** With no terminal to ask, calls that need an answer are declined, saying how to allow them. */
export const declineWithoutTerminal: Approver = async (request) => ({
  decision: 'deny',
  reason: `nobody could be asked (no terminal). The user can allow it with --yolo, --permission-mode auto, or --allow "${request.call.name}(...)"`,
});
