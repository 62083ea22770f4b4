import { type Command, InvalidArgumentError } from 'commander';
import type { GlobalFlags } from '../options.js';

export interface ServeFlags extends GlobalFlags {
  port?: number;
  host?: string;
  pin?: boolean;
  token?: string;
  open?: boolean;
  /** False with --no-scheduler. */
  scheduler: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('expected a port, 0 to 65535');
  return n;
}

const SERVE_HELP = `
Serves the sessions in ~/.hearth/hearth.db (the same ones the terminal uses) to the web UI at /,
scripts and phones: the agent_computer HTTP API and WebSocket protocol, SSE, and an OpenAPI
document at /doc. It also runs the scheduler (jobs, the inbox, wake-ups; as hearth scheduler does,
and only one of them fires at a time) and serves memory at /api/memory. Every request needs the token (or a cookie from the PIN); the token is written
to ~/.hearth/gateway.json, readable by you alone, for local clients. With a shared PostgreSQL
database (storage: postgres://... or HEARTH_DATABASE_URL), the sessions are that database's: one
that another machine runs now (hearth worker, another gateway) streams here live at /ws/<session>
and on the activity feed, watched but not driven (409) until that run ends; approvals, abort and
steer for a gateway turn a worker runs are sent on to it. With "gateway": {"turns": "workers"} in
the config, this gateway runs no turn itself: each message and compaction is queued to the
hearth workers (only those with all of gateway.turn_tags), and the API answers as for a local turn.

Examples:
  hearth serve                                   (127.0.0.1:8000; the web UI is at its URL)
  hearth serve --open                            (and open the web UI in your browser)
  hearth serve --host 0.0.0.0 --pin              (for a phone on your network: prints a PIN and a QR code)
  HEARTH_GATEWAY_TOKEN=... hearth serve --host 0.0.0.0
  curl -H "Authorization: Bearer $(jq -r .token ~/.hearth/gateway.json)" http://127.0.0.1:8000/api/status`;

/** `hearth serve`; the gateway (and its HTTP framework) loads only when this command runs. */
export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the gateway: sessions over HTTP, WebSocket and SSE for the web UI, scripts and phones')
    .option('--port <n>', 'port to listen on (default 8000)', port)
    .option('--host <address>', 'address to bind (default 127.0.0.1; any other needs --pin or --token)')
    .option('--pin', 'print a PIN (and, off loopback, a QR code of the URL) that a browser logs in with')
    .option(
      '--token <token>',
      'the bearer token clients send, 16+ characters (HEARTH_GATEWAY_TOKEN keeps it out of ps)',
    )
    .option('--open', 'open the web UI in your browser, logged in with a one-time link')
    .option('--no-scheduler', 'do not run scheduled jobs, the inbox and wake-ups here (hearth scheduler can)')
    .addHelpText('after', SERVE_HELP)
    .action(async (_opts: unknown, cmd: Command) => {
      const { runServe } = await import('./serve-run.js');
      process.exitCode = await runServe(cmd.optsWithGlobals<ServeFlags>());
    });
}
