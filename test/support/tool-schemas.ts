import type { ToolSchema } from '../../src/llm/types.js';

/** Two file tools as a client offers them to a server: what transport tests send with each request. */
export const fileToolSchemas: ToolSchema[] = ['read_file', 'write_file'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: name,
    parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  },
}));
