import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { writeFile } from '../fs/atomic-write.js';
import type { TextEncoding } from '../fs/text-encoding.js';
import { displayPath, errorCode, errorMessage, resolveInWorkspace } from '../path-guard.js';
import { type ToolContext, ToolError } from '../types.js';
import {
  bomFor,
  contentBytes,
  countLines,
  type DecodedText,
  decodeText,
  encodeText,
  readDecoded,
} from './file-text.js';

/** A file read for editing: where it is, how it is shown to the model, and its decoded text. */
export interface EditTarget {
  abs: string;
  shown: string;
  decoded: DecodedText;
  mode: number;
}

// Matching is in memory and partly quadratic; files this large are not hand-edited by a model.
const MAX_EDIT_BYTES = 10 * 1024 * 1024;

export async function loadForEdit(ctx: ToolContext, p: string, tool: string): Promise<EditTarget> {
  const abs = await resolveInWorkspace(ctx.workspace, p, { forWriting: true });
  const shown = displayPath(ctx.workspace, abs);
  const info = await stat(abs).catch((err: unknown) => {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ToolError(`Cannot read ${shown}: ${errorMessage(err)}`);
  });
  if (!info) {
    throw new ToolError(
      `${shown} does not exist, so there is nothing to edit. To create a new file, use write_file.`,
    );
  }
  if (info.isDirectory()) throw new ToolError(`${shown} is a directory; ${tool} needs a file path.`);
  if (!info.isFile())
    throw new ToolError(`${shown} is not a regular file (it may be a pipe, socket or device).`);
  if (info.size > MAX_EDIT_BYTES) {
    throw new ToolError(
      `${shown} is too large to edit (${info.size} bytes; the limit is ${MAX_EDIT_BYTES}).`,
    );
  }
  const edited = await ctx.editor?.read(abs, ctx.signal);
  const decoded =
    edited === undefined ? await readDecoded(abs, shown) : decodeText(Buffer.from(edited, 'utf8'), shown);
  return { abs, shown, decoded, mode: info.mode };
}

/** Writes the edited LF text shaped like the original, in its encoding unless another is given. */
export async function saveEdit(
  ctx: ToolContext,
  target: EditTarget,
  text: string,
  encoding: TextEncoding = target.decoded.encoding,
): Promise<void> {
  if (ctx.signal.aborted) throw new ToolError('Cancelled before the file was written; it is unchanged.');
  const shape = { ...target.decoded, bom: bomFor(encoding, target.decoded) };
  const bytes = contentBytes(encodeText(text, shape), encoding, `Cannot edit ${target.shown}`);
  try {
    await writeFile(ctx, target.abs, bytes, encoding, target.mode);
  } catch (err) {
    throw new ToolError(`Cannot write ${target.shown}: ${errorMessage(err)}`);
  }
}

function failureKey(abs: string): string {
  return `edit-failures:${abs}`;
}

// Below this, rewriting the file whole costs a model less than another round of failed edits.
const SMALL_FILE_LINES = 200;

/**
 * Counts a failed edit on the file and throws the error, adding advice to rewrite the file whole
 * once edits keep failing on a file small enough for that.
 */
export function failEdit(ctx: ToolContext, target: EditTarget, message: string): never {
  const key = failureKey(target.abs);
  const previous = ctx.scratch.get(key);
  const count = (typeof previous === 'number' ? previous : 0) + 1;
  ctx.scratch.set(key, count);
  const lines = countLines(target.decoded.text);
  const advice =
    count >= 2 && lines < SMALL_FILE_LINES
      ? `\n\nThis is failed edit ${count} in a row on ${target.shown}, which has only ${lines} lines: ` +
        'read it again and rewrite it whole with write_file instead.'
      : '';
  throw new ToolError(`Cannot edit ${target.shown}: ${message}${advice}`);
}

export function clearFailures(ctx: ToolContext, target: EditTarget): void {
  ctx.scratch.delete(failureKey(target.abs));
}

export const FINAL_NEWLINE_ONLY =
  'the edit would only add or remove the newline at the end of the file, which edits keep as it was; ' +
  'use write_file to change that.';

const MAX_DIFF_LINES = 80;
const MAX_DIFF_CHARS = 8000;

/** The diff as the model sees it: the head, with a note of how much was cut. */
export function capDiff(diff: string): string {
  const lines = diff.split('\n');
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (kept.length >= MAX_DIFF_LINES || chars + line.length > MAX_DIFF_CHARS) break;
    kept.push(line);
    chars += line.length + 1;
  }
  const cut = lines.length - kept.length;
  if (cut === 0) return diff;
  return `${kept.join('\n')}\n[diff truncated: ${cut} more line${cut === 1 ? '' : 's'}; read the file to see the rest]`;
}

/** An optional boolean that also takes "true"/"false" and null (for "not given"), as small models send them. */
export const looseBoolean = z.preprocess(
  (v) => (v === null ? undefined : v === 'true' ? true : v === 'false' ? false : v),
  z.boolean().optional(),
);
