import { z } from 'zod';
import { type PortedTools, portedTools } from '../ported.js';
import { defineTool, ToolError } from '../types.js';
import type { MemoryPort, RecalledMemory } from './port.js';

export type { MemoryPort, RecalledMemory } from './port.js';

/** Unbound (memory off, or a sub-agent's session), a call says so. */
function memoryOf(port: MemoryPort | undefined): MemoryPort {
  if (!port) throw new ToolError('Long-term memory is off in this session (memory.enabled).');
  return port;
}

const MAX_TEXT = 500;

const rememberTool = (port: MemoryPort | undefined) =>
  defineTool({
    name: 'remember',
    description:
      'Keep a short note for later sessions: a fact about the project, a user preference, or a lesson learned.',
    parameters: z.object({
      text: z.string().trim().min(1).max(MAX_TEXT).describe('one self-contained sentence or two'),
      kind: z.enum(['fact', 'preference', 'learning']).default('fact'),
      scope: z.enum(['project', 'user']).default('project').describe('user: applies in every project'),
    }),
    mutates: true,
    touches: (args) => ({ text: args.text }),
    label: (args) => `remember: ${args.text}`,
    async run(args) {
      const kept = await memoryOf(port).remember(args);
      return kept.duplicateOf
        ? `Already remembered as #${kept.id}: ${kept.duplicateOf}`
        : `Remembered as #${kept.id}.`;
    },
  });

const recallTool = (port: MemoryPort | undefined) =>
  defineTool({
    name: 'recall',
    description: 'Search long-term memory (notes from earlier sessions) by meaning or exact words.',
    parameters: z.object({
      query: z.string().trim().min(1),
      k: z.number().int().min(1).max(20).default(5),
    }),
    mutates: false,
    label: (args) => `recall: ${args.query}`,
    async run(args, ctx) {
      const found = await memoryOf(port).recall(args.query, args.k, ctx.signal);
      const note = found.keywordOnly ? `(keyword search only: ${found.keywordOnly})\n` : '';
      if (found.memories.length === 0) return `${note}No memories match.`;
      return `${note}${found.memories.map(formatRecalled).join('\n')}`;
    },
  });

const forgetTool = (port: MemoryPort | undefined) =>
  defineTool({
    name: 'forget',
    description: 'Delete a memory that is wrong or out of date, by its id (#12).',
    parameters: z.object({
      id: z.union([
        z.number().int().positive(),
        z
          .string()
          .regex(/^#?\d+$/)
          .transform((s) => Number(s.replace('#', ''))),
      ]),
    }),
    mutates: true,
    touches: (args) => ({ text: `#${args.id}` }),
    label: (args) => `forget #${args.id}`,
    async run(args) {
      if (!(await memoryOf(port).forget(args.id)))
        throw new ToolError(`No memory #${args.id} here. recall lists ids.`);
      return `Forgot #${args.id}.`;
    },
  });

/** One line per memory, as the model sees it in recall results and in the memory block. */
export function formatRecalled(memory: RecalledMemory): string {
  const where = memory.scope === 'user' ? ', user' : '';
  return `- #${memory.id} (${memory.kind}${where}) ${memory.text.replace(/\s+/g, ' ').trim()}`;
}

/**
 * Three tools rather than one with an action: `recall` only reads, so it never asks, while
 * `remember` and `forget` change what every later session is shown and so ask like any change.
 * src/setup/ binds them to each session's memory (what they keep links to its message).
 */
export const memoryTools: PortedTools<MemoryPort> = portedTools((port) => [
  rememberTool(port),
  recallTool(port),
  forgetTool(port),
]);
