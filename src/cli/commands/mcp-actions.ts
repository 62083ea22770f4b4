import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { hearthHome } from '../../config/load.js';
import { MCP_SERVER_NAME, type McpServerSpec, readMcpFile } from '../../config/mcp-servers.js';
import { checkWorkspace } from '../../config/workspace.js';
import { estimateTokens } from '../../llm/tokens.js';
import type { McpHub } from '../../mcp/hub.js';
import { DEFAULT_EXPOSED, HEARTH_TASK, serveMcp } from '../../mcp/server.js';
import { openMcpHub } from '../../mcp/setup.js';
import { describeServers } from '../../tools/external.js';
import { resolveConnection } from '../connect.js';
import { type GlobalFlags, loadConfigFromFlags, runtimeFromFlags } from '../options.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';

/* What the `mcp` commands do, loaded when one runs (their description is mcp.ts). */

export async function listServers(cmd: Command): Promise<void> {
  const hub = await openHub(cmd);
  try {
    if (!hub) {
      process.stdout.write(
        'No MCP servers configured. Add one with: hearth mcp add NAME -- COMMAND ARGS...\n',
      );
      return;
    }
    for (const line of describeServers(hub.status())) process.stdout.write(`${visible(line)}\n`);
  } finally {
    await hub?.close();
  }
}

export async function addServer(
  name: string,
  command: string[],
  opts: AddOptions,
  cmd: Command,
): Promise<void> {
  if (!MCP_SERVER_NAME.test(name))
    throw new UsageError(`"${name}": use letters, digits, "_" and "-" (at most 40).`);
  const spec = specFrom(command, opts);
  const file = mcpFilePath(cmd, opts.project === true);
  await editMcpFile(file, (servers) => {
    servers[name] = spec;
  });
  process.stdout.write(
    `Added "${name}" to ${file}.${opts.project ? ' Approve the file with: hearth config trust' : ''}\nTry it: hearth mcp test ${name}\n`,
  );
}

export async function removeServer(name: string, opts: { project?: boolean }, cmd: Command): Promise<void> {
  const file = mcpFilePath(cmd, opts.project === true);
  let had = false;
  await editMcpFile(file, (servers) => {
    had = name in servers;
    delete servers[name];
  });
  if (!had) throw new UsageError(`No server "${name}" in ${file}.`);
  process.stdout.write(`Removed "${name}" from ${file}.\n`);
}

export async function testServer(name: string, cmd: Command): Promise<void> {
  const hub = await openHub(cmd);
  try {
    if (!hub?.status().some((s) => s.name === name)) {
      throw new UsageError(`No MCP server "${name}" is configured (hearth mcp list shows them).`);
    }
    // The user asked and waits: a first start may download the server (npx -y), longer than a search waits.
    process.stderr.write(`Starting "${visible(name)}" and listing its tools…\n`);
    const tools = await hub.list(name, undefined, { patient: true });
    const problem = hub.status().find((s) => s.name === name)?.problem;
    if (!tools) throw new UsageError(problem ?? `MCP server "${name}" listed no tools.`);
    let total = 0;
    for (const tool of tools) {
      const tokens = estimateTokens(JSON.stringify(tool));
      total += tokens;
      process.stdout.write(`${visible(`mcp__${name}__${tool.name}`)}  ~${tokens} tokens\n`);
    }
    process.stdout.write(`${tools.length} tools, ~${total} tokens in all.\n`);
  } finally {
    await hub?.close();
  }
}

export async function serveHearth(opts: { expose?: string[] }, cmd: Command, version: string): Promise<void> {
  const runtime = await runtimeFromFlags(cmd.optsWithGlobals<GlobalFlags>());
  try {
    const expose = opts.expose ?? DEFAULT_EXPOSED;
    const unknown = expose.filter((n) => n !== HEARTH_TASK && !runtime.tools.get(n));
    if (unknown.length > 0) throw new UsageError(`Unknown tool(s) to expose: ${unknown.join(', ')}.`);
    for (const note of runtime.configNotes) process.stderr.write(`${visible(note)}\n`);
    await serveMcp({ runtime, expose, version, connect: () => resolveConnection(runtime.config) });
  } finally {
    await runtime.close();
  }
}

/** The configured servers, none started; what was ignored goes to stderr. */
async function openHub(cmd: Command): Promise<McpHub | undefined> {
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  const { config } = await loadConfigFromFlags(flags);
  const { hub, notes } = await openMcpHub(
    config,
    await checkWorkspace(resolve(flags.workspace)),
    hearthHome(),
  );
  for (const note of notes) process.stderr.write(`${visible(note)}\n`);
  return hub;
}

export interface AddOptions {
  url?: string;
  header?: string[];
  env?: string[];
  project?: boolean;
}

function specFrom(command: string[], opts: AddOptions): McpServerSpec {
  if (opts.url && command.length > 0) throw new UsageError('Give either --url or a command, not both.');
  if (opts.url) return { type: 'http', url: opts.url, headers: pairs(opts.header, '--header') };
  const [program, ...args] = command;
  if (!program)
    throw new UsageError(
      'Give the command after --, e.g. hearth mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .',
    );
  return { command: program, args, env: pairs(opts.env, '--env') };
}

function pairs(list: string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list ?? []) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`${flag} takes NAME=VALUE, not "${item}".`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

function mcpFilePath(cmd: Command, project: boolean): string {
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  return project ? join(resolve(flags.workspace), '.hearth', 'mcp.json') : join(hearthHome(), 'mcp.json');
}

/** Rewrites the file's `mcpServers`, keeping whatever else it holds; written aside and renamed. */
async function editMcpFile(file: string, edit: (servers: Record<string, unknown>) => void): Promise<void> {
  await readMcpFile(file); // refuses a file that does not parse, rather than overwriting it
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    json = {};
  }
  const servers = { ...((json.mcpServers as Record<string, unknown>) ?? {}) };
  edit(servers);
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify({ ...json, mcpServers: servers }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}
