import { join } from 'node:path';
import { adoptPlan, PLAN_APPROVED, planRequest } from '../../agent/plan-first.js';
import type { Runtime } from '../../agent/runtime.js';
import { setupNotes } from '../../agent/session-setup.js';
import { hearthHome } from '../../config/load.js';
import { oversizedInput } from '../../llm/input-fit.js';
import { diskFullError } from '../../store/disk-full.js';
import type { SessionRow } from '../../store/rows.js';
import type { Connection } from '../connect.js';
import { reflectOnLeaving } from '../reflect-on-exit.js';
import { colorEnabled, formatTokens, makeStyle, type Style } from '../render.js';
import { visible } from '../sanitize.js';
import { readTaskImages } from '../task-images.js';
import { loadTextWidth } from '../text-width.js';
import { replApprover } from './approver.js';
import { type CommandContext, completeCommand, parseCommand, runCommand } from './commands.js';
import { History } from './history.js';
import { imageMentions } from './image-mentions.js';
import { NOT_CONNECTED_HELP } from './info-commands.js';
import { LineEditor } from './input.js';
import { Keyboard } from './keyboard.js';
import type { PromptText } from './prompt-view.js';
import { ReplRenderer } from './render-turn.js';
import { ReplState } from './repl-state.js';
import { Spinner } from './spinner.js';
import { statusLine } from './status.js';
import { TurnRunner } from './turn.js';

export interface ReplOptions {
  runtime: Runtime;
  /** Undefined when no server answered at start: the REPL opens anyway and connects with a task. */
  connection: Connection | undefined;
  /** Why there is no connection, to tell the user with how to fix it. */
  connectionError?: string;
  /** Sent as soon as the REPL is up (`hearth -i "task"`). */
  firstTask?: string;
  /** Plan the first task in plan mode before carrying it out (`--plan`). */
  planFirst?: boolean;
  /** Continue this stored session instead of starting one with the first task. */
  resume?: SessionRow;
  deepWork: boolean;
  version: string;
  /** Builds the runtime (and connects) for another folder, with the flags the REPL started with (`/project`). */
  openWorkspace?: (path: string) => Promise<{ runtime: Runtime; connection: Connection | undefined }>;
}

/** Two Ctrl+C at an empty prompt within this long exit; one alone only says so. */
const DOUBLE_PRESS_MS = 2000;

/**
 * The interactive mode: read an entry, run it as a slash command or as a task for the agent,
 * show the turn as it streams, print the status line, repeat. Resolves to the exit code (0)
 * on /exit, Ctrl+D, or Ctrl+C twice at an empty prompt.
 */
export async function runRepl(options: ReplOptions): Promise<number> {
  const { runtime, connection } = options;
  const { stdin, stdout, stderr } = process;
  const outColor = colorEnabled(stdout, process.env);
  const style = makeStyle(outColor);
  const errStyle = makeStyle(colorEnabled(stderr, process.env));
  // The prompt belongs on the terminal even when the answers are redirected to a file.
  const ui = stdout.isTTY ? stdout : stderr;
  const uiStyle = makeStyle(colorEnabled(ui, process.env));

  const keyboard = new Keyboard(stdin, ui);
  const history = History.load(join(hearthHome(), 'history'));
  const editor = new LineEditor(keyboard, ui, history, completeCommand);
  const renderer = new ReplRenderer(stdout, stderr, { out: style, outColor, err: errStyle });
  const spinner = new Spinner(stderr, errStyle);
  const exitNow = (code: number) => {
    spinner.stop();
    keyboard.close();
    process.exit(code);
  };
  const turns = new TurnRunner(keyboard, renderer, spinner, exitNow);
  const approve = replApprover({ editor, turns, err: stderr, style: errStyle });
  const repl = new ReplState({ runtime, approve, deepWork: options.deepWork }, connection);

  // Redraws need exact widths from the first prompt on. The sandbox is not waited for: its trial run
  // goes on behind the prompt, and the first session says its warning before its first tool call.
  await loadTextWidth();
  const notes = setupNotes(runtime, connection);
  if (options.resume) await repl.resume(options.resume);
  stderr.write(`${banner(options, repl, errStyle)}\n`);
  for (const note of notes) stderr.write(`${errStyle.yellow(`! ${note}`)}\n`);
  if (options.connectionError) {
    stderr.write(
      `${errStyle.yellow(`! ${options.connectionError}`)}\n${errStyle.dim(`/help, /sessions and /resume work meanwhile; to connect, ${NOT_CONNECTED_HELP}. Each task tries again.`)}\n`,
    );
  }

  let exiting = false;
  const ctx: CommandContext = {
    repl,
    turns,
    renderer,
    style,
    print: (text, newline = true) => stdout.write(newline ? `${text}\n` : text),
    exit: () => {
      exiting = true;
    },
    runTask: (task, planFirst) => runTask(task, planFirst),
    choose: async (question, keys) => {
      const answer = await editor.choose(question, keys);
      return answer.kind === 'key' ? answer.key : undefined;
    },
    ask: async (question) => {
      const answer = await editor.question(question);
      return answer.kind === 'line' ? answer.text : undefined;
    },
    switchWorkspace: (path) => switchWorkspace(path),
  };
  /** The sessions this REPL ran tasks in: reflected on when it exits (memory.reflect). */
  const ran = new Set<string>();
  const reflect = async () => {
    if (!repl.connection || ran.size === 0) return;
    await reflectOnLeaving(repl.runtime, repl.connection, [...ran], 'interactive', (line) =>
      stderr.write(`${errStyle.dim(visible(line))}\n`),
    );
    ran.clear();
  };
  const switchWorkspace = async (path: string) => {
    if (!options.openWorkspace) throw new Error('This REPL cannot change its folder.');
    const next = await options.openWorkspace(path);
    await repl.leave();
    // What was learnt in the old folder is reflected on with its own runtime, before it closes.
    await reflect();
    const previous = await repl.switchRuntime(next.runtime, next.connection);
    if (previous !== runtime) await previous.close();
  };
  const runTask = async (task: string, planFirst = false) => {
    // Images the entry names are read (or refused) before a session exists: nothing is stored for a refusal.
    const connection = await repl.connect();
    const oversized = oversizedInput(task, connection.contextWindow);
    if (oversized) {
      stderr.write(`${errStyle.red(oversized)}\n`);
      return;
    }
    const files = await imageMentions(task, repl.runtime.workspace);
    const images = await readTaskImages(files, repl.runtime, connection);
    if (images) stderr.write(`${errStyle.dim(`(attached ${files.map((f) => visible(f)).join(', ')})`)}\n`);
    const session = await repl.ensureSession();
    ran.add(session.id);
    const steer = (text: string) => session.steer(text);
    const { gate } = repl.runtime;
    const mode = gate.mode;
    if (planFirst) gate.mode = 'plan';
    let done = await turns.run(
      (signal) => session.run(planFirst ? planRequest(task) : task, signal, images),
      (event) => repl.record(event),
      steer,
    );
    gate.mode = mode;
    if (planFirst && done?.reason === 'completed') {
      const answer = await editor.choose(
        `${errStyle.yellow('?')} Carry out this plan? ${errStyle.cyan('y')} yes · ${errStyle.cyan('n')} no  (one key) `,
        ['y', 'n'],
      );
      if (answer.kind === 'key' && answer.key === 'y') {
        const steps = adoptPlan(session.journal.state, done.text);
        stderr.write(`${errStyle.dim(`The plan's ${steps} steps are the todo list now.`)}\n`);
        done = await turns.run(
          (signal) => session.run(PLAN_APPROVED, signal),
          (event) => repl.record(event),
          steer,
        );
      }
    }
    // Messages typed too late for the run to take them start the next run at once, unless the
    // user stopped the run: then they wait for the next message, and come before it.
    while (session.queued.length > 0 && done?.reason !== 'aborted') {
      done = await turns.run(
        (signal) => session.run(undefined, signal),
        (event) => repl.record(event),
        steer,
      );
    }
    if (session.queued.length > 0) {
      stderr.write(
        `${errStyle.dim(`(${session.queued.length} queued message(s) will go with your next message)`)}\n`,
      );
    }
    stderr.write(`${statusLine(await repl.statusFacts(), errStyle)}\n`);
  };

  // In raw mode Ctrl+C is a key, not a signal; a SIGINT from elsewhere should act the same.
  const onSigint = () => keyboard.press({ name: 'c', ctrl: true, sequence: '\x03' });
  const onTerminate = (signal: NodeJS.Signals) => exitNow(signal === 'SIGHUP' ? 129 : 143);
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onTerminate);
  process.on('SIGHUP', onTerminate);
  keyboard.start();
  try {
    if (options.firstTask) {
      history.add(options.firstTask);
      ui.write(`${prompt(repl, uiStyle).first}${options.firstTask}\n`);
      await runTask(options.firstTask, options.planFirst);
    }
    let lastInterrupt = 0;
    while (!exiting) {
      const input = await editor.read(prompt(repl, uiStyle));
      if (input.kind === 'eof') break;
      if (input.kind === 'interrupt') {
        if (!input.empty) continue;
        if (Date.now() - lastInterrupt < DOUBLE_PRESS_MS) break;
        lastInterrupt = Date.now();
        stderr.write(`${errStyle.dim('(Ctrl+C again to exit, or Ctrl+D)')}\n`);
        continue;
      }
      lastInterrupt = 0;
      if (input.text.trim() === '') continue;
      const command = parseCommand(input.text);
      try {
        if (command) await runCommand(ctx, command.name, command.arg);
        else await runTask(input.text);
      } catch (err) {
        // The REPL outlives a failed command: say what went wrong and prompt again.
        renderer.settle();
        // Said as a full disk, not a driver's error; sending again once there is room carries on.
        const storage = await repl.runtime.storage().catch(() => ({}));
        const told = diskFullError(err, storage) ?? (err as Error);
        stderr.write(`${errStyle.red(`Error: ${told.message}`)}\n`);
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onTerminate);
    process.off('SIGHUP', onTerminate);
    spinner.stop();
    keyboard.close();
  }
  // How to come back is said first: it is on the screen whatever happens after.
  const id = repl.sessionId;
  if (id) stderr.write(`${errStyle.dim(`session ${id} · continue with: hearth --resume ${id}`)}\n`);
  // Interpreters and other tool processes end with the REPL, or they would hold the program open.
  await repl.leave();
  await reflect();
  // The runtime the REPL started with is its caller's to close; one a /project switch built is its own.
  if (repl.runtime !== runtime) await repl.runtime.close();
  return 0;
}

/** The prompt names the permission mode when it is not the usual one: plan and auto change what happens. */
function prompt(repl: ReplState, style: Style): PromptText {
  const mode = repl.runtime.gate.mode;
  const label = mode === 'normal' ? '' : `${mode} `;
  return { first: style.cyan(`${label}› `), rest: style.dim(`${' '.repeat(label.length)}… `) };
}

function banner(options: ReplOptions, repl: ReplState, style: Style): string {
  const { connection } = repl;
  const resumed = repl.sessionId ? ` · resumed session ${repl.sessionId}` : '';
  const server = connection
    ? `${style.cyan(connection.model)} · ${connection.kind} at ${connection.baseUrl} · ctx ${formatTokens(connection.contextWindow)}`
    : style.yellow('no model server yet');
  return [
    `${style.bold('Hearth')} ${options.version} · ${server}${resumed}`,
    style.dim(
      '/help for commands · Alt+Enter or a trailing \\ for a new line · Ctrl+C cancels · Ctrl+D exits',
    ),
  ].join('\n');
}
