import type { Command } from 'commander';
import type { AttachFlags } from '../attach/attach-actions.js';

const ATTACH_HELP = `
Connects this terminal to a session of a running gateway (hearth serve): its events stream here as
in the REPL, lines you type are sent as messages (queued while it works), approval questions are
asked here, and Ctrl+C stops the running turn (twice: leave; the session goes on in the gateway).
A dropped connection or a restarted gateway is reconnected by itself, missing nothing.

The gateway is found in ~/.hearth/gateway.json (written by hearth serve, readable by you alone);
--url and --token (or HEARTH_GATEWAY_URL and HEARTH_GATEWAY_TOKEN) reach another one.
With stdin not a terminal, each line is a message, sent once the one before it is answered
(an approval question takes the next line: y, a or n), and attach exits at the end of input.

Examples:
  hearth attach                     (pick from the gateway's sessions)
  hearth attach fix-tests           (attach to session fix-tests)
  hearth attach --new               (a new session in this folder)
  echo "run the tests" | hearth attach fix-tests`;

/** `hearth attach`; its client code loads only when this command runs. */
export function addAttachCommand(program: Command): void {
  program
    .command('attach')
    .description('connect this terminal to a session of a running gateway (hearth serve)')
    .argument('[session]', 'the session id; none: choose from a list (at a terminal)')
    .option('--new', 'start a new session (named SESSION when given) in this folder')
    .option('--url <url>', 'the gateway, e.g. http://127.0.0.1:8000 (default: from ~/.hearth/gateway.json)')
    .option('--token <token>', 'its token (HEARTH_GATEWAY_TOKEN keeps it out of ps)')
    .option('--no-history', 'show only what happens from now on, not the session so far')
    .addHelpText('after', ATTACH_HELP)
    .action(async (session: string | undefined, _opts: unknown, cmd: Command) => {
      const { runAttach } = await import('../attach/attach-actions.js');
      process.exitCode = await runAttach(session, cmd.optsWithGlobals<AttachFlags>());
    });
}
