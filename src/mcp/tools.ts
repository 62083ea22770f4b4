import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type AnyTool, defineTool, ToolError, type ToolOutput } from '../tools/types.js';
import { type McpConnection, McpServerError, type McpToolInfo } from './connection.js';

/** `mcp__SERVER__TOOL`, the convention other agents use, so permission rules carry over (`mcp__github__*`). */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** Descriptions are sent with every request that offers the tool: the first paragraph is enough. */
const MAX_DESCRIPTION = 300;

/**
 * A server's tool as a Hearth tool. Its JSON Schema is sent as the server wrote it (the server
 * validates the arguments); the server's hints are not trusted to skip approvals, so every MCP
 * tool counts as one that changes things, and rules or "always" answers allow it
 * (`mcp__github__*`). The call is what rules match: the tool's name and its arguments.
 */
export function mcpTool(connection: McpConnection, info: McpToolInfo): AnyTool {
  const name = mcpToolName(connection.name, info.name);
  const paragraph = (info.description ?? info.title ?? info.name).trim().split(/\n\s*\n/)[0]!;
  const description =
    paragraph.length <= MAX_DESCRIPTION ? paragraph : `${paragraph.slice(0, MAX_DESCRIPTION - 1).trimEnd()}…`;
  const { $schema: _drop, ...schema } = info.inputSchema as Record<string, unknown>;
  return defineTool({
    ...declared(name),
    description,
    jsonSchema: { ...schema, type: 'object' },
    async run(args, ctx) {
      let result: CallToolResult;
      try {
        result = await connection.callTool(info.name, args, ctx.signal);
      } catch (err) {
        if (err instanceof McpServerError)
          return { ok: false, output: err.message, display: `⚠ ${err.message}` };
        throw err;
      }
      return toOutput(result);
    },
  });
}

/**
 * A call, by name, of a tool of a server not listed yet. It declares what every MCP tool declares,
 * so rules, approvals and labels see the call as they would the listed tool; running it lists the
 * server (`resolve`, which starts it) and runs the tool of that name, or says why it cannot.
 */
export function unlistedTool(
  name: string,
  resolve: (signal: AbortSignal) => Promise<AnyTool | string>,
): AnyTool {
  return defineTool({
    ...declared(name),
    description: 'A tool of an MCP server not listed yet.',
    async run(args, ctx) {
      const tool = await resolve(ctx.signal);
      if (typeof tool === 'string') return { ok: false, output: tool, display: `⚠ ${tool}` };
      return tool.run(args, ctx);
    },
  });
}

/** What a call of an MCP tool declares, listed or not. */
function declared(name: string) {
  return {
    name,
    parameters: z.record(z.string(), z.unknown()),
    mutates: true,
    touches: (args: Record<string, unknown>) => ({ text: JSON.stringify(args) }),
    label: (args: Record<string, unknown>) => `${name} ${clip(JSON.stringify(args))}`,
  };
}

/** What the model reads: text as is, images attached, resources inlined or pointed at. */
function toOutput(result: CallToolResult): ToolOutput {
  const parts: string[] = [];
  const attachments: Array<{ path: string; mimeType: string; base64: string }> = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
      case 'audio': {
        const bytes = Math.floor((item.data.length * 3) / 4);
        parts.push(`[${item.type}: ${item.mimeType}, ${bytes} bytes]`);
        if (item.type === 'image')
          attachments.push({
            path: `mcp-image-${attachments.length + 1}`,
            mimeType: item.mimeType,
            base64: item.data,
          });
        break;
      }
      case 'resource': {
        const resource = item.resource;
        parts.push(
          'text' in resource && typeof resource.text === 'string'
            ? `[resource ${resource.uri}]\n${resource.text}`
            : `[resource ${resource.uri}: ${resource.mimeType ?? 'binary'}, not shown]`,
        );
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const output = parts.join('\n') || '(no output)';
  if (result.isError) {
    // The server's own words, as an error the model can act on.
    throw new ToolError(output);
  }
  return { output, ...(attachments.length > 0 ? { meta: { attachments } } : {}) };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
