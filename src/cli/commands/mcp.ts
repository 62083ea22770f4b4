import type { Command } from 'commander';
import { collect, nameList } from '../arg-parsers.js';
import type { AddOptions } from './mcp-actions.js';

/** `hearth mcp ...`: the MCP servers Hearth uses, and Hearth as one. What they do is mcp-actions.ts. */
export function addMcpCommands(program: Command, version: string): void {
  const actions = () => import('./mcp-actions.js');
  const mcp = program
    .command('mcp')
    .description('MCP tool servers: list, add, remove, test them; or serve Hearth itself over MCP')
    .action(() => mcp.outputHelp());

  mcp
    .command('list')
    .description('list the configured servers, where each is configured, and whether it runs in this session')
    .action(async (_opts: unknown, cmd: Command) => (await actions()).listServers(cmd));

  mcp
    .command('add <name> [command...]')
    .description(
      'add a server to ~/.hearth/mcp.json: hearth mcp add fs -- npx -y @modelcontextprotocol/server-filesystem . ; or --url for HTTP',
    )
    .option('--url <url>', 'a Streamable HTTP server instead of a command')
    .option(
      '--header <name=value>',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the help names the ${VAR} syntax.
      'an HTTP header (${VAR} is expanded when the server starts); repeatable',
      collect,
    )
    .option('--env <name=value>', 'an environment variable for the command; repeatable', collect)
    .option(
      '--project',
      "write the workspace's .hearth/mcp.json instead (used once approved: hearth config trust)",
    )
    .action(async (name: string, command: string[], opts: AddOptions, cmd: Command) =>
      (await actions()).addServer(name, command, opts, cmd),
    );

  mcp
    .command('remove <name>')
    .description('remove a server from ~/.hearth/mcp.json (or, with --project, the workspace file)')
    .option('--project', "the workspace's .hearth/mcp.json")
    .action(async (name: string, opts: { project?: boolean }, cmd: Command) =>
      (await actions()).removeServer(name, opts, cmd),
    );

  mcp
    .command('test <name>')
    .description('start a server, list its tools with what each costs in tokens, and stop it')
    .action(async (name: string, _opts: unknown, cmd: Command) => (await actions()).testServer(name, cmd));

  mcp
    .command('serve')
    .description(
      'serve Hearth over MCP on stdin/stdout: its tools, confined to the workspace with its sandbox and permission rules, and hearth_task',
    )
    .option(
      '--expose <names>',
      'the tools to expose (default: read_file, list_dir, glob, grep, write_file, edit_file, shell, hearth_task)',
      nameList,
    )
    .action(async (opts: { expose?: string[] }, cmd: Command) =>
      (await actions()).serveHearth(opts, cmd, version),
    );
}
