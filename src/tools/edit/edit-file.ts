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

export const editFileTool = defineTool({
  name: 'edit_file',
  description: 'Replace old_string (exact, no line numbers; unique unless replace_all) with new_string.',
  parameters: z.object({
    path: z.string(),
    old_string: z.string(),
    new_string: z.string(),
    replace_all: looseBoolean,
    encoding: encodingParameter,
  }),
  mutates: true,
  touches: (args) => ({ writes: [args.path] }),
  preview: (args, ctx) => previewChange(ctx.workspace, args.path, { edits: [args] }),
  async run(args, ctx) {
    const target = await loadForEdit(ctx, args.path, 'edit_file');
    const before = target.decoded.text;
    const result = applyEdit(before, toLf(args.old_string), toLf(args.new_string), {
      replaceAll: args.replace_all === true,
    });
    if (!result.ok) failEdit(ctx, target, result.error);
    const after = keepFinalNewline(result.content, target.decoded);
    if (after === before) failEdit(ctx, target, FINAL_NEWLINE_ONLY);

    const encoding = args.encoding ?? target.decoded.encoding;
    await saveEdit(ctx, target, after, encoding);
    clearFailures(ctx, target);

    const diff = unifiedDiff(target.shown, before, after);
    const count = result.replacements > 1 ? `, ${result.replacements} replacements` : '';
    return {
      output: `Edited ${target.shown}${writtenAs(encoding, target.decoded.encoding)} (strategy: ${result.strategy}, line ${result.line}${count})\n${capDiff(diff)}`,
      display: diff,
      meta: {
        path: target.shown,
        strategy: result.strategy,
        line: result.line,
        replacements: result.replacements,
        encoding,
        ...diffStats(before, after),
      },
    };
  },
});
