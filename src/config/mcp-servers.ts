import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, describeIssues } from './errors.js';
import { trustState } from './trust.js';

/**
 * MCP servers, in the shape users already have (`mcpServers` in Claude Code's and Cursor's files):
 * `{"name": {"command", "args", "env", "cwd"}}` for stdio, `{"type": "http", "url", "headers"}`
 * for Streamable HTTP. A server runs a program on the host or sends the conversation's tool calls
 * to a URL, so where a server may come from is a security matter: the user's own files and the
 * config's `mcp.servers` (a security key, security.ts) always; the workspace's `.mcp.json` and
 * `.hearth/mcp.json`, which the agent's commands could write, only once the user approved that very
 * content (`hearth config trust`).
 */

const stdioServer = z
  .object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    /** Set to true to keep a server configured but not offered. */
    disabled: z.boolean().optional(),
  })
  .strict();

const httpServer = z
  .object({
    type: z.enum(['http', 'streamable-http']),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).default({}),
    disabled: z.boolean().optional(),
  })
  .strict();

export const mcpServerSchema = z.union([stdioServer, httpServer]);
export type McpServerSpec = z.output<typeof mcpServerSchema>;

/** A server's name becomes part of its tools' names (`mcp__NAME__tool`), so it keeps to safe characters. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;
export const mcpServersSchema = z.record(
  z.string().regex(MCP_SERVER_NAME, 'server names use letters, digits, "_" and "-" (at most 40)'),
  mcpServerSchema,
);

/** A configured server with where it was configured (for `hearth mcp list` and messages). */
export interface McpServerEntry {
  name: string;
  spec: McpServerSpec;
  source: string;
}

export interface McpServers {
  servers: McpServerEntry[];
  /** Files whose servers were not used, and why (said at start-up, like ignored settings). */
  notes: string[];
}

/** The MCP files Hearth reads, later wins by server name. `trusted` files need no approval. */
export function mcpFiles(workspace: string, userDir: string): Array<{ path: string; trusted: boolean }> {
  return [
    { path: join(userDir, 'mcp.json'), trusted: true },
    { path: join(workspace, '.mcp.json'), trusted: false },
    { path: join(workspace, '.hearth', 'mcp.json'), trusted: false },
  ];
}

/**
 * Every configured server: the user's ~/.hearth/mcp.json, the config's `mcp.servers`, then the
 * workspace's files if approved. A file that does not parse is an error naming it; an unapproved
 * one is skipped with a note.
 */
export async function loadMcpServers(opts: {
  workspace: string;
  userDir: string;
  fromConfig: Record<string, McpServerSpec>;
  configSource: string;
}): Promise<McpServers> {
  const byName = new Map<string, McpServerEntry>();
  const notes: string[] = [];
  const files = mcpFiles(opts.workspace, opts.userDir);
  const add = (servers: Record<string, McpServerSpec>, source: string) => {
    for (const [name, spec] of Object.entries(servers)) byName.set(name, { name, spec, source });
  };
  for (const file of files.slice(0, 1)) add(await readMcpFile(file.path), file.path);
  add(opts.fromConfig, opts.configSource);
  for (const file of files.slice(1)) {
    const text = await readText(file.path);
    if (text === undefined) continue;
    const { state } = await trustState(opts.userDir, file.path, text);
    if (state !== 'trusted') {
      notes.push(
        `Ignored the MCP servers in ${file.path}: ${state === 'changed' ? 'it changed since you approved it' : 'workspace files start servers only once you approve them'}. Check it, then run \`hearth config trust\`.`,
      );
      continue;
    }
    add(parseMcpFile(text, file.path), file.path);
  }
  return { servers: [...byName.values()].filter((s) => !s.spec.disabled), notes };
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
}

/** The servers in one `mcpServers` file; {} when it does not exist. */
export async function readMcpFile(path: string): Promise<Record<string, McpServerSpec>> {
  const text = await readText(path);
  return text === undefined ? {} : parseMcpFile(text, path);
}

function parseMcpFile(text: string, path: string): Record<string, McpServerSpec> {
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  const servers = (json as { mcpServers?: unknown } | null)?.mcpServers ?? {};
  const parsed = mcpServersSchema.safeParse(servers);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, servers, mcpServersSchema);
    throw new ConfigError(`${path}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/**
 * `${VAR}` and `${VAR:-default}` in a server's settings, from the user's environment (never the
 * workspace's .env). An unset variable without a default is an error naming it, not an empty string.
 */
export function expandEnv(spec: McpServerSpec, env: NodeJS.ProcessEnv): McpServerSpec {
  const expand = (text: string): string =>
    text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(`\${${name}} is not set in the environment`);
    });
  const values = (record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, expand(v)]));
  if ('url' in spec) return { ...spec, url: expand(spec.url), headers: values(spec.headers) };
  return {
    ...spec,
    command: expand(spec.command),
    args: spec.args.map(expand),
    env: values(spec.env),
    ...(spec.cwd === undefined ? {} : { cwd: expand(spec.cwd) }),
  };
}
