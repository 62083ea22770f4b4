import { Command, Option } from 'commander';
import { version } from '../util/version.js';
import { collect, nameList, positiveInt, positiveNumber } from './arg-parsers.js';
import { addAttachCommand } from './commands/attach.js';
import { addConfigCommands } from './commands/config.js';
import { addDebugCommands } from './commands/debug.js';
import { addDoctorCommand } from './commands/doctor.js';
import { addInitCommand } from './commands/init.js';
import { addJobsCommands } from './commands/jobs.js';
import { addMcpCommands } from './commands/mcp.js';
import { addMemoryCommands } from './commands/memory.js';
import { addModelsCommands } from './commands/models.js';
import { addPipelineCommands } from './commands/pipeline.js';
import { addSchedulerCommands } from './commands/scheduler.js';
import { addServeCommand } from './commands/serve.js';
import { addSessionCommands } from './commands/sessions.js';
import { addSkillsCommands } from './commands/skills.js';
import { addStorageCommands } from './commands/storage.js';
import { addWorkerCommands } from './commands/worker.js';
import { terminalJson, visible } from './sanitize.js';
import type { MainFlags } from './task-command.js';
import { UsageError } from './usage-error.js';

/*
 * This module only describes the command line: what runs (config, the agent, the REPL) is loaded
 * by dynamic import once a command is chosen, so `--help` and parse errors cost little more than
 * starting Node.
 */

const HELP_AFTER = `
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
    type(import('../store/sessions.js'), (m) => m.SessionNotFoundError),
    type(import('../store/database.js'), (m) => m.StoreError),
    type(import('../tools/catalog.js'), (m) => m.ToolSelectionError),
    type(import('../permissions/rules.js'), (m) => m.RuleSyntaxError),
    type(import('../sandbox/types.js'), (m) => m.SandboxError),
    type(import('../scheduler/errors.js'), (m) => m.SchedulerError),
    type(import('../scheduler/errors.js'), (m) => m.JobDefinitionError),
    type(import('../store/scheduler-storage.js'), (m) => m.WakeupLimitError),
  ]);
  return [UsageError, ...types].some((t) => t !== undefined && err instanceof t);
}

function buildProgram(): Command {
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
    .option('--json', 'print every event as one JSON line instead of text')
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
    .addOption(
      new Option('--timeout <seconds>', 'limit for one model request (default 600)').argParser(
        positiveNumber,
      ),
    )
    .addOption(new Option('--db <file>', 'the session database').hideHelp())
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run hearth --help for usage)')
    .action(async (words: string[], flags: MainFlags, cmd: Command) => {
      const { runTaskCommand } = await import('./task-command.js');
      process.exitCode = await runTaskCommand(
        words,
        flags,
        cmd.commands.map((c) => c.name()),
        version,
      );
    });
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
  return program;
}

/** Runs the program, turning the user's errors into one clear line and exit code 1. */
export async function runProgram(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
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
