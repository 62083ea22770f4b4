import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import type { ToolCall } from '../llm/types.js';
import type { ApprovalAnswer, ApprovalRequest, Approver } from '../permissions/gate.js';
import { unifiedDiff } from '../tools/edit/diff.js';
import { toLf } from '../tools/edit/file-text.js';
import { applyEdit } from '../tools/edit/match.js';
import { displayPath, resolveInWorkspace } from '../tools/path-guard.js';
import { colorDiff, firstLine, type Style } from './render.js';

/** How an approval question reaches a person: a plain readline prompt, or the REPL's line editor. */
export interface ApprovalIo {
  write(text: string): void;
  /** Reads one line; undefined when the question was cancelled (Ctrl+C, end of input, the run ended). */
  ask(question: string, signal: AbortSignal): Promise<string | undefined>;
  style: Style;
  /** Set: edits and writes are previewed as a diff against the file on disk. */
  workspace?: string;
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
  const preview = io.workspace ? await previewCall(request.call, io.workspace) : undefined;
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
  workspace?: string,
): Approver {
  return async (request, signal) => {
    const rl = createInterface({ input, output, terminal: input.isTTY === true });
    try {
      return await askApproval(request, signal, {
        style,
        workspace,
        write: (text) => output.write(text),
        ask: (question, cancel) => rl.question(question, { signal: cancel }).catch(() => undefined),
      });
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

/**
 * What an edit or write would change, as a unified diff against the file on disk, or a one-line
 * note when the edit would not apply. Undefined for other tools and for anything unreadable: the
 * preview is a courtesy, and the summary line above it still says what the call is.
 */
export async function previewCall(call: ToolCall, workspace: string): Promise<string | undefined> {
  if (!['write_file', 'edit_file', 'multi_edit'].includes(call.name)) return undefined;
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(call.arguments) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof args?.path !== 'string') return undefined;
  let abs: string;
  try {
    abs = await resolveInWorkspace(workspace, args.path);
  } catch {
    return undefined;
  }
  const shown = displayPath(workspace, abs);
  const before = await readFile(abs, 'utf8').then(toLf, () => undefined);
  if (call.name === 'write_file') {
    return typeof args.content === 'string'
      ? unifiedDiff(shown, before ?? '', toLf(args.content)) || `(${shown} would not change)`
      : undefined;
  }
  if (before === undefined) return `(${shown} does not exist, so this edit will fail)`;
  const edits = call.name === 'edit_file' ? [args] : editList(args.edits);
  if (edits.length === 0) return undefined;
  let after = before;
  for (const edit of edits) {
    if (typeof edit.old_string !== 'string' || typeof edit.new_string !== 'string') return undefined;
    const result = applyEdit(after, toLf(edit.old_string), toLf(edit.new_string), {
      replaceAll: edit.replace_all === true || edit.replace_all === 'true',
    });
    if (!result.ok) return `(the edit does not apply as given: ${firstLine(result.error)})`;
    after = result.content;
  }
  return unifiedDiff(shown, before, after) || `(${shown} would not change)`;
}

/** multi_edit's list; some models send it as a JSON string. */
function editList(raw: unknown): Array<Record<string, unknown>> {
  let list = raw;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return [];
    }
  }
  return Array.isArray(list)
    ? list.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object')
    : [];
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
