import { z } from 'zod';
import { encodingParameter } from '../fs/text-encoding.js';
import { defineTool } from '../types.js';
import { diffStats, unifiedDiff } from './diff.js';
import {
  capDiff,
  clearFailures,
  FINAL_NEWLINE_ONLY,
  failEdit,
  loadForEdit,
  looseBoolean,
  saveEdit,
} from './edit-support.js';
import { keepFinalNewline, toLf, writtenAs } from './file-text.js';
import { applyEdit } from './match.js';
import { previewChange } from './preview.js';

const editSchema = z.object({
  old_string: z.string().describe('The exact text to replace'),
  new_string: z.string().describe('The text to put in its place'),
  replace_all: looseBoolean.describe('Replace every occurrence (default false)'),
});

/** Some models send the array as a JSON string; accept that rather than fail the call. */
const editsSchema = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}, z.array(editSchema).min(1));

export const multiEditTool = defineTool({
  name: 'multi_edit',
  description:
    'Apply several edit_file-style replacements to one file, in order, each on the result of the previous; ' +
    'all succeed or nothing is written.',
  parameters: z.object({
    path: z.string(),
    edits: editsSchema.describe('Replacements, applied in order'),
    encoding: encodingParameter,
  }),
  mutates: true,
  touches: (args) => ({ writes: [args.path] }),
  preview: (args, ctx) => previewChange(ctx.workspace, args.path, { edits: args.edits }),
  async run(args, ctx) {
    const target = await loadForEdit(ctx, args.path, 'multi_edit');
    const before = target.decoded.text;
    const total = args.edits.length;
    const applied: string[] = [];
    let text = before;
    for (const [i, edit] of args.edits.entries()) {
      const oldString = toLf(edit.old_string);
      const result = applyEdit(text, oldString, toLf(edit.new_string), {
        replaceAll: edit.replace_all === true,
      });
      if (!result.ok) {
        failEdit(
          ctx,
          target,
          failureMessage(i, total, result.error, before !== text && matchesOriginal(before, edit)),
        );
      }
      const count = result.replacements > 1 ? ` x${result.replacements}` : '';
      applied.push(`#${i + 1} ${result.strategy} line ${result.line}${count}`);
      text = result.content;
    }

    const after = keepFinalNewline(text, target.decoded);
    if (after === before) failEdit(ctx, target, FINAL_NEWLINE_ONLY);
    const encoding = args.encoding ?? target.decoded.encoding;
    await saveEdit(ctx, target, after, encoding);
    clearFailures(ctx, target);

    const diff = unifiedDiff(target.shown, before, after);
    const summary = `Edited ${target.shown}${writtenAs(encoding, target.decoded.encoding)} (${total} edit${total === 1 ? '' : 's'}: ${applied.join(', ')})`;
    return {
      output: `${summary}\n${capDiff(diff)}`,
      display: diff,
      meta: { path: target.shown, edits: total, encoding, ...diffStats(before, after) },
    };
  },
});

function failureMessage(i: number, total: number, error: string, earlierEditTouchedIt: boolean): string {
  const head = `edits[${i}] (edit ${i + 1} of ${total}) failed, so no edit was applied and the file is unchanged.`;
  const order = earlierEditTouchedIt
    ? '\nIts old_string matches the file as it was, but an earlier edit in this call changed that text: ' +
      'edits apply in order, so old_string must match the text after the earlier edits.'
    : '';
  return `${head}${order}\n${error}`;
}

function matchesOriginal(original: string, edit: z.infer<typeof editSchema>): boolean {
  return applyEdit(original, toLf(edit.old_string), toLf(edit.new_string), {
    replaceAll: edit.replace_all === true,
  }).ok;
}
