import { type Command, Option } from 'commander';
import type { AcpFlags } from './acp-run.js';

const ACP_HELP = `
Runs Hearth as an Agent Client Protocol (ACP) agent on stdin and stdout, for editors that drive
agents in their own panel: Zed, the JetBrains IDEs, Neovim (CodeCompanion, avante.nvim) and Emacs
(agent-shell). The editor starts it; you do not type into it. Setup for each: docs/editors.md.

Each session works in the folder the editor opens it in, with the same config, profiles, model
server discovery and MCP servers as the terminal (and the editor's own MCP servers added). Sessions
are the stored ones the terminal uses: the editor lists and reopens them, and a session started in
the editor continues in the terminal with hearth --resume ID (and the other way round).
Approvals are asked in the editor: allow once, always allow calls like it (as "a" at the terminal),
reject, or always reject that call, for the rest of the session. Modes: normal (Ask), manual (Ask
every call), plan (read-only) and auto (Yolo). When the editor offers its file API, the file tools
read its buffers (unsaved changes included) and write through it, so edits appear in its review;
paths, permission rules and the sandbox are checked as always. When it offers terminals, commands
show in them, still run by Hearth in its sandbox. The editor's model menu offers your config's
profiles and the server's models; /undo, /rewind N and /compact work as in the terminal.

Only protocol messages go to stdout; notes and errors go to stderr.

Examples:
  hearth acp                                  (what an editor runs)
  hearth acp -m qwen3-coder --base-url http://127.0.0.1:1234/v1
  hearth acp --permission-mode plan`;

/** `hearth acp`; the protocol library loads only when this command runs. */
export function addAcpCommand(program: Command, version: string): void {
  program
    .command('acp')
    .description('serve editors (Zed, JetBrains, Neovim, Emacs) as an Agent Client Protocol agent on stdio')
    // What the editor's terminal runs for a command: Hearth, running it in the session's sandbox.
    .addOption(new Option('--run-in-sandbox <job>').hideHelp())
    .addHelpText('after', ACP_HELP)
    .action(async (_opts: unknown, cmd: Command) => {
      const { runAcp } = await import('./acp-run.js');
      process.exitCode = await runAcp(cmd.optsWithGlobals<AcpFlags>(), version);
    });
}
