import type { AgentEvent, StopReason } from '../agent/events.js';
import type { Runtime } from '../agent/runtime.js';
import { openSession, setupNotes } from '../agent/session-setup.js';
import type { SessionRow } from '../store/sessions.js';
import { declineWithoutTerminal, terminalApprover } from './approval-prompt.js';
import type { Connection } from './connect.js';
import { colorEnabled, makeStyle, TerminalRenderer } from './render.js';
import { terminalJson } from './sanitize.js';

export interface OneShotOptions {
  runtime: Runtime;
  connection: Connection;
  /** Undefined when resuming an interrupted session with nothing new to say. */
  task: string | undefined;
  /** Continue this stored session instead of starting one. */
  resume?: SessionRow;
  json: boolean;
  /** Deep-work mode: higher limits, and a push to finish open todos. */
  deepWork: boolean;
}

/** Exit codes: 0 done, 1 error, 2 stopped by a limit (iterations, budget, a loop), 3 waiting for approval, 130 interrupted. */
const exitCodes: Record<StopReason, number> = {
  completed: 0,
  error: 1,
  max_iterations: 2,
  budget: 2,
  loop: 2,
  paused: 3,
  aborted: 130,
};

/** Runs one task to the end, printing events as they come. Resolves to the exit code. */
export async function runOneShot(options: OneShotOptions): Promise<number> {
  const { runtime, connection } = options;
  const style = makeStyle(colorEnabled(process.stderr, process.env));
  for (const note of await setupNotes(runtime, connection)) {
    process.stderr.write(`${style.yellow(`! ${note}`)}\n`);
  }
  const session = await openSession(
    {
      runtime,
      connection,
      approve: process.stdin.isTTY
        ? terminalApprover(process.stdin, process.stderr, style)
        : declineWithoutTerminal,
      deepWork: options.deepWork,
    },
    options.resume,
  );

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    // A second Ctrl+C means "now": do not wait for the loop to wind down.
    if (interrupts > 1) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', onSigint);

  const renderer = new TerminalRenderer(process.stdout, process.stderr, style);
  const emit = options.json
    ? (event: AgentEvent) => process.stdout.write(`${terminalJson(event)}\n`)
    : (event: AgentEvent) => renderer.render(event);

  let exitCode = 1;
  try {
    for await (const event of session.run(options.task, controller.signal)) {
      emit(event);
      if (event.type === 'done') exitCode = exitCodes[event.reason];
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
  process.stderr.write(
    style.dim(`session ${session.id} · continue with: hearth --resume ${session.id} "..."\n`),
  );
  return exitCode;
}
