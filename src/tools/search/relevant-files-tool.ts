import { z } from 'zod';
import { defineTool } from '../types.js';
import { formatRanking, rankRelevantFiles } from './relevant-files.js';

/** Tokens (characters / 4) the tool's answer may take. */
const ANSWER_TOKENS = 300;

/**
 * `relevant_files(query)`: the workspace's files ranked for a task, for finding where to start
 * without reading the tree. Deferred (behind the tool index): grep and glob serve most turns.
 */
export const relevantFilesTool = defineTool({
  name: 'relevant_files',
  description: 'Workspace files ranked by relevance to a task or question (words in paths and contents).',
  parameters: z.object({
    query: z.string().min(1),
    limit: z.number().int().min(1).max(30).optional(),
  }),
  mutates: false,
  touches: () => ({ reads: ['.'] }),
  async run(args, ctx) {
    const ranked = await rankRelevantFiles(ctx.workspace, args.query, {
      signal: ctx.signal,
      limit: args.limit ?? 10,
      ...(ctx.leavesOut ? { leavesOut: (p: string) => ctx.leavesOut!(p) } : {}),
    });
    if (ranked.length === 0)
      return {
        output: `No file mentions the words of ${JSON.stringify(args.query)}. Try other words, or glob.`,
        meta: { matches: 0 },
      };
    return { output: formatRanking(ranked, ANSWER_TOKENS), meta: { matches: ranked.length } };
  },
});
