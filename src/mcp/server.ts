import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime } from '../agent/runtime.js';
import { openSession } from '../agent/session-setup.js';
import type { Connection } from '../llm/connection.js';
import type { Approver } from '../permissions/gate.js';
import { servedTools } from '../tools/catalog.js';
import { SessionScratch } from '../tools/scratch.js';
import { MemoryState, type ToolContext } from '../tools/types.js';

/**
 * `hearth mcp serve`: Hearth as an MCP server over stdio, for other agents and editors. The tools
 * it exposes are Hearth's own, confined to the workspace, run in the session's sandbox and held to
 * its permission rules; nobody can be asked over MCP, so a call the rules would ask about is
 * refused with the rule that would allow it. `hearth_task` runs a whole Hearth agent on a task.
 * The low-level SDK server is used (not McpServer) so that arguments go through Hearth's own
 * validation, with its error messages, and schemas are the ones Hearth sends its models.
 */

export const HEARTH_TASK = 'hearth_task';
export const DEFAULT_EXPOSED = [...servedTools, HEARTH_TASK];

export interface ServeOptions {
  runtime: Runtime;
  /** Tool names to expose (`hearth_task` among them or not). */
  expose: string[];
  /** The model server, found on the first `hearth_task`. */
  connect(): Promise<Connection>;
  version: string;
}

const NOBODY_TO_ASK: Approver = async () => ({
  decision: 'deny',
  reason:
    'nobody can be asked over MCP; an allow rule in the config (permissions.allow) or --allow covers it',
});

/** Serves on stdin/stdout until the client goes away. */
export async function serveMcp(options: ServeOptions): Promise<void> {
  const [{ Server }, { StdioServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const server = new Server({ name: 'hearth', version: options.version }, { capabilities: { tools: {} } });
  const tools = listTools(options);
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools }));
  // One scratch for the client's direct calls, as one session's: its interpreters end with the server.
  const scratch = new SessionScratch();
  const handler = callHandler(options, scratch);
  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) =>
    handler(request.params.name, request.params.arguments ?? {}, extra.signal),
  );
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await scratch.end();
}

function listTools(options: ServeOptions) {
  const { runtime, expose } = options;
  return expose.map((name) => {
    if (name === HEARTH_TASK) {
      return {
        name: HEARTH_TASK,
        description: `Give Hearth, a coding agent working in ${runtime.workspace}, a whole task; returns its final answer.`,
        inputSchema: {
          type: 'object' as const,
          properties: { task: { type: 'string', description: 'What to do, in plain words' } },
          required: ['task'],
        },
      };
    }
    const schema = runtime.tools.schemaOf(name)!.function;
    return {
      name,
      description: schema.description,
      inputSchema: { type: 'object' as const, ...schema.parameters },
    };
  });
}

function callHandler(options: ServeOptions, scratch: SessionScratch) {
  const { runtime } = options;
  const durable = new MemoryState();
  let calls = 0;
  const fail = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });
  const ok = (text: string): CallToolResult => ({ content: [{ type: 'text', text }] });

  return async (
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<CallToolResult> => {
    if (!options.expose.includes(name))
      return fail(`Unknown tool "${name}". Tools: ${options.expose.join(', ')}.`);
    if (name === HEARTH_TASK) return runTask(options, args, signal);
    const prepared = runtime.tools.prepare({ id: `mcp-${++calls}`, name, arguments: JSON.stringify(args) });
    if (!prepared.ok) return fail(prepared.error);
    const verdict = await runtime.gate.check(prepared.tool, prepared.args, durable);
    if (verdict.action === 'deny') return fail(verdict.reason);
    if (verdict.action === 'ask') {
      const rules = await runtime.gate.allowRules(prepared.tool, prepared.args);
      return fail(
        `Not run: Hearth would ask before this (${verdict.reason}), and nobody can be asked over MCP.${rules.length > 0 ? ` A rule that allows it: ${rules[0]}` : ''}`,
      );
    }
    const leavesOut = runtime.gate.secretFilter(prepared.tool.name, durable);
    const ctx: ToolContext = {
      workspace: runtime.workspace,
      signal,
      scratch,
      durable,
      sandbox: (await runtime.sandbox()).sandbox,
      progress: () => {},
      leavesOut: (file) => leavesOut(file),
    };
    const result = await runtime.tools.run(prepared, ctx);
    return result.ok ? ok(result.output) : fail(result.output);
  };
}

/** A whole agent run in a new stored session; the answer is its final text. */
async function runTask(options: ServeOptions, args: Record<string, unknown>, signal: AbortSignal) {
  const task = typeof args.task === 'string' ? args.task.trim() : '';
  if (!task)
    return { isError: true, content: [{ type: 'text' as const, text: 'Give the task as {"task": "..."}.' }] };
  let connection: Connection;
  try {
    connection = await options.connect();
  } catch (err) {
    return {
      isError: true,
      content: [
        { type: 'text' as const, text: `Hearth cannot reach its model server: ${(err as Error).message}` },
      ],
    };
  }
  const session = await openSession({
    runtime: options.runtime,
    connection,
    approve: NOBODY_TO_ASK,
    deepWork: false,
  });
  let text = '';
  let reason = 'error';
  try {
    for await (const event of session.run(task, signal)) {
      if (event.type === 'done') {
        text = event.text;
        reason = event.reason;
      }
    }
  } finally {
    await session.close();
  }
  const answer = reason === 'completed' ? text : `Hearth stopped (${reason}): ${text}`;
  return {
    ...(reason === 'completed' ? {} : { isError: true }),
    content: [{ type: 'text' as const, text: `${answer}\n\n(session ${session.id})` }],
  };
}
