import { Command, Option } from 'commander';
import { version } from '../util/version.js';
import { collect, nameList, positiveInt, positiveNumber, wholeNumber } from './arg-parsers.js';
import { addAcpCommand } from './commands/acp.js';
import { addAttachCommand } from './commands/attach.js';
import { addConfigCommands } from './commands/config.js';
import { addDebugCommands } from './commands/debug.js';
import { addDoctorCommand } from './commands/doctor.js';
import { addEvalCommands } from './commands/eval.js';
import { addInitCommand } from './commands/init.js';
import { addJobsCommands } from './commands/jobs.js';
import { addMcpCommands } from './commands/mcp.js';
import { addMemoryCommands } from './commands/memory.js';
import { addModelsCommands } from './commands/models.js';
import { addPipelineCommands } from './commands/pipeline.js';
import { addProjectsCommands } from './commands/projects.js';
import { addRewindCommands } from './commands/rewind.js';
import { addSchedulerCommands } from './commands/scheduler.js';
import { addServeCommand } from './commands/serve.js';
import { addSessionCommands } from './commands/sessions.js';
import { addSkillsCommands } from './commands/skills.js';
import { addStorageCommands } from './commands/storage.js';
import { addWorkerCommands } from './commands/worker.js';
import { terminalJson, visible } from './sanitize.js';
import type { MainFlags } from './task-command.js';
import { UsageError } from './usage-error.js';
import { type Reading, readWords, shapeOf } from './words-or-command.js';

/*
 * This module only describes the command line: what runs (config, the agent, the REPL) is loaded
 * by dynamic import once a command is chosen, so `--help` and parse errors cost little more than
 * starting Node.
 */

const HELP_AFTER = `
Tasks and commands: the words are a command when the first names one and the rest fit it (its
options, one of its subcommands, the words it takes); any other words are a task, so
hearth plan the refactor of auth and hearth init a git repo go to the model. A subcommand mistyped
by one letter is pointed out (hearth sessions lst). A lone word one letter off a command
(hearth sesions) is asked about at a terminal (Enter runs the command, n the task); without one it
goes to the model, with a note on stderr. -p runs the words as a task whatever they are.

Examples:
  hearth                                       (interactive: type tasks, /help for commands)
  hearth -i "first task"                       (interactive, starting with a task)
  hearth --yolo "summarise README.md and write it to SUMMARY.md"
  git diff | hearth "review this change"
  hearth --base-url http://127.0.0.1:8080/v1 -m qwen2.5-coder "list the TODOs in src/"
  hearth --json "what is in this folder?"      (events as JSON lines)
  hearth -c "now add tests for it"             (continue the last session here)
  hearth --skill fix-issue 123                 (run a skill; see: hearth skills)

Permissions: by default Hearth asks before a tool changes files or runs a command (y = once,
a = always for similar calls, n = no). With no terminal to ask, such calls are declined and the
model is told why (exit code 4), or with --pause-for-approval the run stops to be answered later.
A shell --deny rule also sees through wrappers (sudo, env, xargs, bash -c, eval); a line it cannot
see through (python3 -c, $CMD as the command) asks instead of running. Commands run in a sandbox
(bubblewrap on Linux) that can write only the workspace.

Server: with no --base-url, Hearth tries LM Studio (:1234), Ollama (:11434), llama.cpp (:8080)
and vLLM (:8000) on 127.0.0.1 and uses the first that answers, with its loaded model.

Config, later wins: ~/.hearth/config.json (or .yaml), <workspace>/.hearth/config.json (or .yaml),
HEARTH_* lines in the workspace .env, HEARTH_* environment variables (HEARTH_BASE_URL, HEARTH_MODEL,
HEARTH_API_KEY, HEARTH_TIMEOUT, HEARTH_PERMISSION_MODE, ...; HEARTH_HOME moves ~/.hearth), flags.
Security settings (sandbox, permission mode, allow rules, db_path, base_url, hooks, MCP servers) never
come from the workspace .env, and from <workspace>/.hearth/config (or .mcp.json) only once approved with:
hearth config trust.
See it with: hearth config show. -m also takes a profile name from "models" in the config.

Exit codes: 0 done, 1 error, 2 stopped by a limit (turns, budget, a loop), 3 waiting for approval
(--pause-for-approval; answer with --resume ID --approve all), 4 done but calls were declined because
no terminal could ask, 130 interrupted.`;

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Errors that are the user's to fix: printed as one message, without a stack. Their modules are
 * loaded only once something failed (an error from a module never loaded cannot be one of them).
 */
async function isUserError(err: unknown): Promise<boolean> {
  if (!(err instanceof Error)) return false;
  const type = <M>(load: Promise<M>, pick: (m: M) => ErrorClass) => load.then(pick, () => undefined);
  const types = await Promise.all([
    type(import('../config/errors.js'), (m) => m.ConfigError),
    type(import('../llm/connection.js'), (m) => m.ConnectionError),
    type(import('../llm/discover.js'), (m) => m.DiscoveryError),
    type(import('../store/rows.js'), (m) => m.SessionNotFoundError),
    type(import('../store/sqlite/database.js'), (m) => m.StoreError),
    type(import('../store/disk-full.js'), (m) => m.DiskFullError),
    type(import('../tools/catalog.js'), (m) => m.ToolSelectionError),
    type(import('../permissions/rules.js'), (m) => m.RuleSyntaxError),
    type(import('../sandbox/types.js'), (m) => m.SandboxError),
    type(import('../scheduler/errors.js'), (m) => m.SchedulerError),
    type(import('../scheduler/errors.js'), (m) => m.JobDefinitionError),
    type(import('../store/scheduler-storage.js'), (m) => m.WakeupLimitError),
    type(import('../eval/suite.js'), (m) => m.SuiteError),
  ]);
  return [UsageError, ...types].some((t) => t !== undefined && err instanceof t);
}

/** The whole command line; `withCommands: false` leaves only the main command, which runs a task. */
function buildProgram(withCommands = true): Command {
  const program = new Command('hearth')
    .description(
      'A local-first AI agent for OpenAI-compatible model servers (LM Studio, Ollama, llama.cpp, vLLM).',
    )
    .version(version, '-v, --version')
    .argument('[task...]', 'what to do; piped stdin is appended to it. None at a terminal: interactive mode')
    .option(
      '-i, --interactive',
      'interactive mode (the default with no task at a terminal); a task is its first message',
    )
    .option(
      '-m, --model <name>',
      "model or profile to use (default: the server's loaded or first chat model); a .gguf file runs in process",
    )
    .option('--base-url <url>', 'OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1')
    .option('--api-key <key>', 'API key, if the server wants one')
    .option('-C, --workspace <dir>', 'the folder the agent works in', '.')
    .option(
      '--project [name]',
      'work in a registered project (see: hearth projects) with its defaults; alone: the last used',
    )
    .option('--json', 'print every event as one JSON line instead of text')
    .option(
      '--output-style <style>',
      'terse (the result only), narrative (explained) or json (one JSON result object ends the run on stdout)',
    )
    .option('--yolo', 'run every tool without asking (same as --permission-mode auto)')
    .option(
      '--permission-mode <mode>',
      'auto, normal (ask before changes; default), manual (ask for everything) or plan (read-only)',
    )
    .option(
      '--allow <rule>',
      'pre-approve calls like "shell(npm test*)" or "write_file(src/**)"; repeatable',
      collect,
    )
    .option('--deny <rule>', 'refuse calls like "shell(rm *)"; wins over --allow; repeatable', collect)
    .option(
      '--deep',
      'deep-work mode: 500 turns, a 5M-token budget, a push to finish open todos, and sub-agents (delegate, decompose)',
    )
    .option('-p, --print', 'one-shot: run the task, print the answer, exit (never interactive)')
    .option(
      '--plan',
      'plan first: explore read-only and present a step-by-step plan; on your yes, carry it out with the plan as the todo list',
    )
    .option('--skill <name>', 'run a skill (see: hearth skills); the task words are its arguments')
    .option('-c, --continue', 'continue the most recent session in this workspace')
    .option('--resume <id>', 'continue a stored session (see: hearth sessions)')
    .option(
      '-w, --worktree [name]',
      'work in a git worktree of its own, on a new branch hearth/NAME beside the checkout (NAME made up when left out)',
    )
    .option(
      '--pause-for-approval',
      'with no terminal, stop with exit code 3 when a call needs approval (instead of declining it)',
    )
    .option(
      '--approve <ids>',
      'with --resume: run these waiting calls ("all", or ids separated by commas); decline the rest',
      nameList,
    )
    .option('--tools <names>', 'comma-separated tools or groups to offer instead of the defaults', nameList)
    .option('--image <file>', 'send an image with the task (a vision model is needed); repeatable', collect)
    .option('--max-iterations <n>', 'stop after this many model turns (default 50)', positiveInt)
    .option(
      '--thinking <level>',
      "a reasoning model's thinking: off, low, medium or high (default: the server's; /thinking in the REPL)",
    )
    .addOption(
      new Option('--timeout <seconds>', 'limit for one model request (default 600)').argParser(
        positiveNumber,
      ),
    )
    .option('--seed <n>', 'fixed sampling seed, for repeatable runs where the server honours it', wholeNumber)
    .option(
      '--repetition-penalty <x>',
      'penalise repeated tokens (1 = off; 1.1 helps a model that loops), sent as the server names it',
      positiveNumber,
    )
    .addOption(new Option('--db <file>', 'the session database').hideHelp())
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run hearth --help for usage)')
    .hook('preAction', (root) => enterProject(root))
    .action(async (words: string[], flags: MainFlags) => {
      const { runTaskCommand } = await import('./task-command.js');
      process.exitCode = await runTaskCommand(words, flags, version);
    });
  if (!withCommands) return program;
  addSessionCommands(program);
  addDebugCommands(program);
  addDoctorCommand(program);
  addConfigCommands(program);
  addMcpCommands(program, version);
  addInitCommand(program);
  addMemoryCommands(program);
  addSkillsCommands(program);
  addModelsCommands(program);
  addJobsCommands(program);
  addSchedulerCommands(program);
  addWorkerCommands(program);
  addStorageCommands(program);
  addServeCommand(program);
  addAttachCommand(program);
  addPipelineCommands(program);
  addEvalCommands(program);
  addRewindCommands(program);
  addAcpCommand(program, version);
  addProjectsCommands(program);
  return program;
}

/** `--project [name]`: the project's folder becomes the workspace, and it the last-used project. */
async function enterProject(root: Command): Promise<void> {
  const chosen = root.getOptionValue('project') as string | true | undefined;
  if (chosen === undefined) return;
  if (root.getOptionValueSource('workspace') !== 'default')
    throw new UsageError('--project and -C/--workspace both choose the folder: give one of them.');
  const [{ chooseProject }, { hearthHome }] = await Promise.all([
    import('../config/projects.js'),
    import('../config/sources.js'),
  ]);
  const project = await chooseProject(
    hearthHome(process.env),
    chosen === true ? undefined : chosen,
    Date.now(),
  );
  root.setOptionValue('workspace', project.path);
}

/** Runs the program, turning the user's errors into one clear line and exit code 1. */
export async function runProgram(argv: string[]): Promise<void> {
  try {
    await dispatch(argv);
  } catch (err) {
    if (await isUserError(err)) {
      const message = (err as Error).message;
      // A wrapper reading --json gets the failure as a line it can parse, not only as stderr text.
      if (argv.includes('--json')) process.stdout.write(`${terminalJson({ type: 'error', message })}\n`);
      process.stderr.write(`hearth: ${visible(message)}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}

/** Runs the command line as a command or as a task, by the rule in words-or-command.ts. */
async function dispatch(argv: string[]): Promise<void> {
  const reading = readCommandLine(argv);
  switch (reading.kind) {
    case 'command':
      await buildProgram().parseAsync(argv);
      return;
    case 'task':
      await buildProgram(false).parseAsync(argv);
      return;
    case 'mistyped-subcommand': {
      const [command, typed] = reading.path;
      throw new UsageError(
        `"${typed}" is not a subcommand of hearth ${command}. Did you mean: hearth ${reading.meant.join(' ')}? (hearth ${command} --help lists them)`,
      );
    }
    case 'near-command': {
      const { word, command } = reading;
      if (process.stdin.isTTY !== true || process.stderr.isTTY !== true) {
        process.stderr.write(
          `hearth: "${visible(word)}" is not a command: it goes to the model as a task. For the command: hearth ${command}\n`,
        );
        await buildProgram(false).parseAsync(argv);
        return;
      }
      const answer = await askNearCommand(word, command);
      if (answer === undefined) process.exitCode = 130;
      else if (answer === 'n') await buildProgram(false).parseAsync(argv);
      else {
        const at = argv.lastIndexOf(word);
        await buildProgram().parseAsync([...argv.slice(0, at), command, ...argv.slice(at + 1)]);
      }
      return;
    }
  }
}

/**
 * Reads the command line with the main command's options taken out, on a copy of the program that
 * keeps what it parsed to itself. A line it cannot parse is left to the real parse to report.
 */
export function readCommandLine(argv: string[]): Reading {
  const probe = buildProgram()
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} });
  try {
    const { operands, unknown } = probe.parseOptions(argv.slice(2));
    const flags = probe.opts<MainFlags>();
    if (operands.length > 0 && (flags.print || flags.interactive || flags.skill !== undefined))
      return { kind: 'task' };
    return readWords(operands, shapeOf(probe).subcommands, unknown.length > 0);
  } catch {
    return { kind: 'command' };
  }
}

/** One key: Enter or y runs the command, n the task; Ctrl+C neither (undefined). */
async function askNearCommand(word: string, command: string): Promise<string | undefined> {
  const [{ readKey }, { colorEnabled, makeStyle }] = await Promise.all([
    import('./approval-prompt.js'),
    import('./render.js'),
  ]);
  const style = makeStyle(colorEnabled(process.stderr, process.env));
  return readKey(
    process.stdin,
    process.stderr,
    `"${visible(word)}" is not a command. Run ${style.cyan(`hearth ${command}`)}? ${style.cyan('y')} yes · ${style.cyan('n')} no, give "${visible(word)}" to the model as a task  [Y/n] `,
    ['y', 'n'],
    new AbortController().signal,
    'y',
  );
}
