import { createInterface } from 'node:readline/promises';
import type { ApprovalAnswer, ApprovalRequest, Approver } from '../permissions/gate.js';
import { colorDiff, type Style } from './render.js';
import { visibleDeep } from './sanitize.js';

/** How an approval question reaches a person: a plain readline prompt, or the REPL's line editor. */
export interface ApprovalIo {
  write(text: string): void;
  /** Reads one line; undefined when the question was cancelled (Ctrl+C, end of input, the run ended). */
  ask(question: string, signal: AbortSignal): Promise<string | undefined>;
  /** Reads one of `keys` as soon as it is pressed (no Enter); undefined when cancelled. */
  choose(question: string, keys: readonly string[], signal: AbortSignal): Promise<string | undefined>;
  style: Style;
}

const ANSWER_KEYS = ['y', 'a', 'n'] as const;

const CANCELLED: ApprovalAnswer = { decision: 'deny', reason: 'the user cancelled' };
/** Enough of a diff to judge at a glance; the rest is counted. */
const PREVIEW_LINES = 40;

/**
 * Asks y (once), a (always, for similar calls this session) or n (no, with an optional reason).
 * The question shows the exact command: a control character in it (a carriage return, an
 * erase-line, a bidi override that would make it look like another command) is shown, not obeyed.
 */
export async function askApproval(
  raw: ApprovalRequest,
  signal: AbortSignal,
  io: ApprovalIo,
): Promise<ApprovalAnswer> {
  const { style } = io;
  const request = visibleDeep(raw);
  const { preview } = request;
  const who = request.agent ? `${style.bold(`[${request.agent}]`)} ` : '';
  io.write(`\n${style.yellow('?')} ${who}${style.cyan(request.summary)}\n  ${style.dim(request.reason)}\n`);
  if (preview) io.write(`${indent(colorDiff(preview, style, PREVIEW_LINES))}\n`);
  const answer = await io.choose(
    `  Allow? ${style.cyan('y')} once · ${style.cyan('a')} always (similar calls) · ${style.cyan('n')} no  (one key) `,
    ANSWER_KEYS,
    signal,
  );
  if (answer === 'y') return { decision: 'once' };
  if (answer === 'a') return { decision: 'always' };
  if (answer !== 'n') return CANCELLED;
  const reason = await io.ask('  Reason for the model (optional, Enter to skip): ', signal);
  if (reason === undefined) return CANCELLED;
  const said = reason.trim();
  return { decision: 'deny', reason: said ? `the user said no: "${said}"` : 'the user said no' };
}

/**
 * Waits for one of `keys` on a terminal in raw mode and echoes it; Ctrl+C or Ctrl+D cancel. Other
 * keys are ignored, and so is an Enter pressed out of habit in the same burst as the answer. A
 * question with a default (`enter`) takes an Enter alone as that key.
 */
export function readKey(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  question: string,
  keys: readonly string[],
  signal: AbortSignal,
  enter?: string,
): Promise<string | undefined> {
  output.write(question);
  return new Promise((resolve) => {
    const wasRaw = input.isRaw === true;
    if (input.isTTY) input.setRawMode(true);
    const finish = (key: string | undefined) => {
      input.off('data', onData);
      input.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      if (input.isTTY) input.setRawMode(wasRaw);
      input.pause();
      output.write(`${key ?? ''}\n`);
      resolve(key);
    };
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (text.includes('\x03') || text.includes('\x04')) return finish(undefined);
      if (enter !== undefined && /^[\r\n]+$/.test(text)) return finish(enter);
      const key = keys.find((k) => text.trim().toLowerCase() === k);
      if (key) finish(key);
    };
    const onEnd = () => finish(undefined);
    const onAbort = () => finish(undefined);
    input.on('data', onData);
    input.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
    input.resume();
  });
}

/**
 * Asks at the terminal: the answer is one key; a reason is a readline line, so it works over SSH,
 * in tmux and with pastes.
 */
export function terminalApprover(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  style: Style,
): Approver {
  return async (request, signal) => {
    return askApproval(request, signal, {
      style,
      write: (text) => output.write(text),
      choose: (question, keys, cancel) => readKey(input, output, question, keys, cancel),
      ask: async (question, cancel) => {
        const rl = createInterface({ input, output, terminal: input.isTTY === true });
        try {
          return await rl.question(question, { signal: cancel }).catch(() => undefined);
        } finally {
          rl.close();
        }
      },
    });
  };
}

export { declineWithoutTerminal } from '../permissions/decline.js';

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
