import { createInterface } from 'node:readline/promises';
import type { ApprovalAnswer, ApprovalRequest, Approver } from '../permissions/gate.js';
import { colorDiff, type Style } from './render.js';

/** How an approval question reaches a person: a plain readline prompt, or the REPL's line editor. */
export interface ApprovalIo {
  write(text: string): void;
  /** Reads one line; undefined when the question was cancelled (Ctrl+C, end of input, the run ended). */
  ask(question: string, signal: AbortSignal): Promise<string | undefined>;
  style: Style;
}

const CANCELLED: ApprovalAnswer = { decision: 'deny', reason: 'the user cancelled' };
/** Enough of a diff to judge at a glance; the rest is counted. */
const PREVIEW_LINES = 40;

/** Asks y (once), a (always, for similar calls this session) or n (no, with an optional reason). */
export async function askApproval(
  request: ApprovalRequest,
  signal: AbortSignal,
  io: ApprovalIo,
): Promise<ApprovalAnswer> {
  const { style } = io;
  const { preview } = request;
  io.write(`\n${style.yellow('?')} ${style.cyan(request.summary)}\n  ${style.dim(request.reason)}\n`);
  if (preview) io.write(`${indent(colorDiff(preview, style, PREVIEW_LINES))}\n`);
  for (;;) {
    const answer = (await io.ask('  Allow? [y]es once / [a]lways / [n]o: ', signal))?.trim().toLowerCase();
    if (answer === undefined) return CANCELLED;
    if (answer === 'y' || answer === 'yes') return { decision: 'once' };
    if (answer === 'a' || answer === 'always') return { decision: 'always' };
    if (answer === 'n' || answer === 'no') {
      const reason = await io.ask('  Reason for the model (optional): ', signal);
      if (reason === undefined) return CANCELLED;
      const said = reason.trim();
      return { decision: 'deny', reason: said ? `the user said no: "${said}"` : 'the user said no' };
    }
  }
}

/**
 * Asks at the terminal through readline, one line per answer, so it works over SSH, in tmux
 * and with pastes.
 */
export function terminalApprover(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  style: Style,
): Approver {
  return async (request, signal) => {
    const rl = createInterface({ input, output, terminal: input.isTTY === true });
    try {
      return await askApproval(request, signal, {
        style,
        write: (text) => output.write(text),
        ask: (question, cancel) => rl.question(question, { signal: cancel }).catch(() => undefined),
      });
    } finally {
      rl.close();
    }
  };
}

/** With no terminal to ask, calls that need an answer are declined, saying how the user can allow them. */
export const declineWithoutTerminal: Approver = async (request) => {
  const rules = (request.allowRules ?? [`${request.call.name}(...)`])
    .map((rule) => `--allow '${rule}'`)
    .join(' ');
  // A secret file asks in every mode: only a rule that names it helps, so --yolo is not offered.
  const how = request.secret ? rules : `${rules}, or --yolo`;
  return {
    decision: 'deny',
    reason: `nobody could be asked (no terminal). The user can allow it with ${how}`,
  };
};

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
