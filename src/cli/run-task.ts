import type { AgentEvent, DoneEvent, StopReason } from '../agent/events.js';
import { adoptPlan, PLAN_APPROVED, planRequest } from '../agent/plan-first.js';
import type { Runtime } from '../agent/runtime.js';
import { openSession, setupNotes } from '../agent/session-setup.js';
import { oversizedInput } from '../llm/input-fit.js';
import type { ToolCall } from '../llm/types.js';
import type { Approver } from '../permissions/gate.js';
import { diskFullError } from '../store/disk-full.js';
import type { SessionRow } from '../store/rows.js';
import { declineWithoutTerminal, readKey, terminalApprover } from './approval-prompt.js';
import type { Connection } from './connect.js';
import type { JsonLines } from './json-lines.js';
import { reflectOnLeaving } from './reflect-on-exit.js';
import { colorEnabled, makeStyle, TerminalRenderer } from './render.js';
import { ResultObject } from './result-object.js';
import { visible } from './sanitize.js';
import { readTaskImages } from './task-images.js';
import { UsageError } from './usage-error.js';

export interface OneShotOptions {
  runtime: Runtime;
  connection: Connection;
  /** Undefined when resuming an interrupted session with nothing new to say. */
  task: string | undefined;
  /** Continue this stored session instead of starting one. */
  resume?: SessionRow;
  /** Events go there as JSON lines instead of being shown to a person. */
  json?: JsonLines;
  /** Deep-work mode: higher limits, and a push to finish open todos. */
  deepWork: boolean;
  /** With no terminal, pause with exit code 3 on a call that needs approval instead of declining it. */
  pauseForApproval: boolean;
  /** Plan first in plan mode, then carry the plan out once the user approves it. */
  plan?: boolean;
  /** Answers for the calls a paused session waits on: these run, the others are declined. */
  approved?: string[] | 'all';
  /** Image files sent with the task (`--image`). */
  images?: string[];
}

/**
 * Exit codes: 0 done, 1 error, 2 stopped by a limit (iterations, budget, a loop), 3 waiting for
 * approval, 4 finished but calls were declined because nobody could be asked, 130 interrupted.
 */
const DECLINED_EXIT = 4;
const exitCodes: Record<StopReason, number> = {
  completed: 0,
  error: 1,
  max_iterations: 2,
  budget: 2,
  loop: 2,
  paused: 3,
  blocked: 1,
  aborted: 130,
};

/** Runs one task to the end, printing events as they come. Resolves to the exit code. */
export async function runOneShot(options: OneShotOptions): Promise<number> {
  const { runtime, connection } = options;
  const style = makeStyle(colorEnabled(process.stderr, process.env));
  const { json } = options;
  // With the json output style stdout holds only the result object; the run shows on stderr.
  const result = !json && runtime.config.output_style === 'json' ? new ResultObject() : undefined;
  const answers = result ? process.stderr : process.stdout;
  const renderer = new TerminalRenderer(answers, process.stderr, style, answers.isTTY !== true);
  const emit = json
    ? (event: AgentEvent) => json.write(event)
    : (event: AgentEvent) => {
        result?.record(event);
        renderer.render(event);
      };
  // Refused before a session exists: nothing is stored or sent for a task no request can hold.
  const oversized = options.task ? oversizedInput(options.task, connection.contextWindow) : undefined;
  if (oversized) throw new UsageError(oversized);
  const images = await readTaskImages(options.images, runtime, connection);

  let declined = 0;
  const approve: Approver | undefined = process.stdin.isTTY
    ? terminalApprover(process.stdin, process.stderr, style)
    : options.pauseForApproval
      ? undefined
      : async (request, signal) => {
          declined++;
          return declineWithoutTerminal(request, signal);
        };
  const storage = await runtime.storage();
  const session = await openSession(
    { runtime, connection, approve, deepWork: options.deepWork },
    options.resume,
  ).catch((err: unknown) => {
    throw diskFullError(err, storage, options.resume?.id) ?? err;
  });
  let failed = false;
  try {
    // Named before anything else is said, so a script can resume it whatever happens next.
    emit(session.identity);
    for (const note of setupNotes(runtime, connection)) emit({ type: 'warning', message: note });
    const pending = session.pending;
    if (options.approved && pending.length === 0) {
      throw new UsageError(
        `Session ${session.id} is not waiting for approval; --approve has nothing to answer.`,
      );
    }
    if (!options.approved && pending.length > 0 && !process.stdin.isTTY) {
      throw new UsageError(
        `Session ${session.id} waits for approval of ${describeCalls(pending)}. Answer with: hearth --resume ${session.id} --approve all (or --approve ID,ID; the others are declined)`,
      );
    }
    const unknown =
      options.approved === 'all'
        ? []
        : (options.approved ?? []).filter((id) => !pending.some((c) => c.id === id));
    if (unknown.length > 0) {
      throw new UsageError(
        `Not waiting for approval: ${unknown.join(', ')}. Waiting: ${describeCalls(pending)}.`,
      );
    }

    const controller = new AbortController();
    let interrupts = 0;
    const onSigint = () => {
      interrupts++;
      // A second Ctrl+C means "now": do not wait for the loop to wind down.
      if (interrupts > 1) process.exit(130);
      controller.abort();
    };
    process.on('SIGINT', onSigint);

    const drain = async (events: AsyncGenerator<AgentEvent>): Promise<DoneEvent | undefined> => {
      let last: DoneEvent | undefined;
      for await (const event of events) {
        emit(event);
        if (event.type === 'done') last = event;
      }
      return last;
    };
    const { gate } = runtime;
    const mode = gate.mode;
    let done: DoneEvent | undefined;
    try {
      if (options.approved) {
        const approved = options.approved === 'all' ? pending.map((c) => c.id) : options.approved;
        done = await drain(session.resume({ approved }, controller.signal));
      } else if (options.plan && options.task) {
        gate.mode = 'plan';
        done = await drain(session.run(planRequest(options.task), controller.signal, images));
        gate.mode = mode;
        if (done?.reason === 'completed') done = (await carryOutPlan(done.text)) ?? done;
      } else {
        done = await drain(session.run(options.task, controller.signal, images));
      }
    } finally {
      process.off('SIGINT', onSigint);
    }

    /** Asks whether to carry out the plan just presented; at no terminal, says how to later. */
    async function carryOutPlan(plan: string): Promise<DoneEvent | undefined> {
      if (!process.stdin.isTTY) {
        process.stderr.write(
          style.yellow(`The plan waits for your go-ahead: hearth --resume ${session.id} "go ahead"\n`),
        );
        return undefined;
      }
      const key = await readKey(
        process.stdin,
        process.stderr,
        `\nCarry out this plan? ${style.cyan('y')} yes · ${style.cyan('n')} no  (one key) `,
        ['y', 'n'],
        controller.signal,
      );
      if (key !== 'y') return undefined;
      const steps = adoptPlan(session.journal.state, plan);
      process.stderr.write(style.dim(`The plan's ${steps} steps are the todo list now.\n`));
      return drain(session.run(PLAN_APPROVED, controller.signal));
    }
    if (done?.reason === 'paused') {
      process.stderr.write(
        style.yellow(
          `Waiting for approval of ${describeCalls(done.pending ?? [])}.\nApprove with: hearth --resume ${session.id} --approve all (or --approve ID,ID; the others are declined)\n`,
        ),
      );
    } else {
      process.stderr.write(
        style.dim(`session ${session.id} · continue with: hearth --resume ${session.id} "..."\n`),
      );
      if (done?.reason === 'completed') {
        await reflectOnLeaving(runtime, connection, [session.id], 'one-shot', (line) =>
          process.stderr.write(style.dim(`${visible(line)}\n`)),
        );
      }
    }
    let code = done ? exitCodes[done.reason] : 1;
    if (done?.reason === 'completed' && declined > 0) {
      process.stderr.write(
        style.yellow(
          `${declined} call(s) were declined because no terminal could ask; each result above says how to allow it, or run with --pause-for-approval to answer later.\n`,
        ),
      );
      code = DECLINED_EXIT;
    }
    if (result) process.stdout.write(`${result.line(session.id, done, code)}\n`);
    return code;
  } catch (err) {
    failed = true;
    throw diskFullError(err, storage, session.id) ?? err;
  } finally {
    // Interpreters a tool started end with the run, or they would hold the process open. Closing
    // may fail for the same reason the run did (a full disk): the run's error is the one told.
    await session.close().catch((err: unknown) => {
      if (!failed) throw err;
    });
  }
}

function describeCalls(calls: ToolCall[]): string {
  return calls.map((call) => `${call.name} (${call.id})`).join(', ');
}
