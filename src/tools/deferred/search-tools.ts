import { z } from 'zod';
import type { ToolSchema } from '../../llm/types.js';
import { defineTool, ToolError } from '../types.js';
import type { ToolIndex } from './tool-index.js';

/**
 * `tool_search` and `use_tool`: how the model reaches tools that are not in the request.
 *
 * Why the request's `tools` never grow. llama.cpp (and so LM Studio and Ollama, which render with
 * the same chat templates) turns the `tools` array into text near the very start of the prompt:
 * Qwen's and Hermes' templates put it in the system block, Llama 3.1's in the first user message.
 * Their prompt caches reuse the longest unchanged prefix, so adding a tool to the array, even at
 * its end, changes the text before the whole conversation and the next request reprocesses all of
 * it (minutes on a laptop for a long session). And llama.cpp constrains a tool call's name to the
 * names in the array once a call starts, so a tool the array does not name cannot be called
 * directly there. Hence:
 * - the array is fixed for the session: the direct tools, `tool_search` (whose description holds
 *   the index) and `use_tool`;
 * - a search's result (an appended message, like any tool result) carries the full schemas;
 * - `use_tool {name, args}` calls any of them; the registry unwraps it into the real call before
 *   validation, so permissions, approvals, audit and labels see the real tool. A call by the real
 *   name also works, for servers that do not constrain names and for calls parsed from text.
 */

export const USE_TOOL = 'use_tool';
export const TOOL_SEARCH = 'tool_search';

export function createToolSearch(index: ToolIndex, schemaOf: (name: string) => ToolSchema | undefined) {
  return defineTool({
    name: TOOL_SEARCH,
    description: `Find tools by keyword; call via ${USE_TOOL}.\n${index.text()}`,
    parameters: z.object({ query: z.string().min(1) }),
    mutates: false,
    label: ({ query }) => `${TOOL_SEARCH} ${query}`,
    async run({ query }, ctx) {
      const { tools, problems } = await index.search(query, ctx.signal);
      const notes = problems.map((p) => `Not available: ${p}`);
      if (tools.length === 0) {
        const known = index.names();
        return {
          ok: notes.length === 0,
          output: [
            ...notes,
            `No tool matches "${query}".${known.length > 0 ? ` Known: ${known.join(', ')}.` : ''}`,
          ].join('\n'),
        };
      }
      const schemas = tools.map((t) => JSON.stringify(schemaOf(t.name)?.function));
      return [...notes, `Call with ${USE_TOOL} {"name": NAME, "args": {...}}:`, ...schemas].join('\n');
    },
  });
}

/**
 * True for `tool_search` and `use_tool`: they belong to the registry that made them (its index),
 * so a registry built from another's tool list (a sub-agent's) leaves them out.
 */
export function isIndexTool(tool: { name: string }): boolean {
  return tool.name === TOOL_SEARCH || tool.name === USE_TOOL;
}

const useToolParameters = z.object({
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The call a stored `use_tool` call stands for ({name, args} well formed), for showing a history
 * to people; any other call as it is. A run's events carry this already (`unwrapped`).
 */
export function namedCall<T extends { name: string; arguments: string }>(call: T): T {
  if (call.name !== USE_TOOL) return call;
  let raw: unknown;
  try {
    raw = JSON.parse(call.arguments || '{}');
  } catch {
    return call;
  }
  const parsed = useToolParameters.safeParse(raw);
  if (!parsed.success || parsed.data.name === USE_TOOL) return call;
  return { ...call, name: parsed.data.name, arguments: JSON.stringify(parsed.data.args ?? {}) };
}

/**
 * Never run itself: the registry unwraps it into the named call (prepare), so this body only runs
 * if a caller bypassed the registry.
 */
export const useTool = defineTool({
  name: USE_TOOL,
  description: `Call a tool from ${TOOL_SEARCH}.`,
  parameters: useToolParameters,
  // Written by hand: zod's record adds propertyNames, tokens that tell the model nothing.
  jsonSchema: {
    type: 'object',
    properties: { name: { type: 'string' }, args: { type: 'object' } },
    required: ['name'],
  },
  mutates: false,
  async run() {
    throw new ToolError(`${USE_TOOL} is unwrapped by the tool registry; call the named tool instead.`);
  },
});
