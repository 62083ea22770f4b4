import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import { ConfigError } from '../config/load.js';
import { DiscoveryError } from '../llm/discover.js';
import { RuleSyntaxError } from '../permissions/rules.js';
import { SandboxError } from '../sandbox/types.js';
import { JobDefinitionError, SchedulerError } from '../scheduler/errors.js';
import { StoreError } from '../store/database.js';
import { SessionNotFoundError } from '../store/sessions.js';
import { WakeupLimitError } from '../store/wakeups.js';
import { ToolSelectionError } from '../tools/catalog.js';
import { closest } from '../util/levenshtein.js';
import { addConfigCommands } from './commands/config.js';
import { addDebugCommands } from './commands/debug.js';
import { addDoctorCommand } from './commands/doctor.js';
import { addInitCommand } from './commands/init.js';
import { addJobsCommands } from './commands/jobs.js';
import { addSchedulerCommands } from './commands/scheduler.js';
import { addSessionCommands } from './commands/sessions.js';
import { addSkillsCommands } from './commands/skills.js';
import { ConnectionError, resolveConnection } from './connect.js';
import {
  collect,
  type GlobalFlags,
  nameList,
  positiveInt,
  positiveNumber,
  runtimeFromFlags,
} from './options.js';
import { runRepl } from './repl/repl.js';
import { runOneShot } from './run-task.js';
import { terminalJson, visible } from './sanitize.js';
import { UsageError } from './usage-error.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

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
Security settings (sandbox, permission mode, allow rules, db_path, base_url, hooks) never come from the workspace .env,
and from <workspace>/.hearth/config only once approved with: hearth config trust.
See it with: hearth config show. -m also takes a profile name from "models" in the config.

Exit codes: 0 done, 1 error, 2 stopped by a limit (turns, budget, a loop), 3 waiting for approval
(--pause-for-approval; answer with --resume ID --approve all), 4 done but calls were declined because
no terminal could ask, 130 interrupted.`;

interface MainFlags extends GlobalFlags {
  interactive?: boolean;
  json?: boolean;
  continue?: boolean;
  resume?: string;
  print?: boolean;
  plan?: boolean;
  pauseForApproval?: boolean;
  approve?: string[];
  skill?: string;
  image?: string[];
}

/** Errors that are the user's to fix: printed as one message, without a stack. */
const USER_ERRORS = [
  ConfigError,
  ConnectionError,
  DiscoveryError,
  SessionNotFoundError,
  StoreError,
  ToolSelectionError,
  UsageError,
  RuleSyntaxError,
  SandboxError,
  SchedulerError,
  JobDefinitionError,
  WakeupLimitError,
];

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
    .option('-m, --model <name>', "model to use (default: the server's loaded or first chat model)")
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
      process.exitCode = await main(
        words,
        flags,
        cmd.commands.map((c) => c.name()),
      );
    });
  addSessionCommands(program);
  addDebugCommands(program);
  addDoctorCommand(program);
  addConfigCommands(program);
  addInitCommand(program);
  addSkillsCommands(program);
  addJobsCommands(program);
  addSchedulerCommands(program);
  return program;
}

/** Runs the program, turning the user's errors into one clear line and exit code 1. */
export async function runProgram(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (USER_ERRORS.some((type) => err instanceof type)) {
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

async function main(words: string[], flags: MainFlags, commands: string[]): Promise<number> {
  let task = words.join(' ').trim();
  // `hearth sesions` is a mistyped command far more often than a one-word task.
  const meant = words.length === 1 && !flags.print ? closest(words[0]!, commands) : undefined;
  if (meant !== undefined && meant !== words[0]) {
    throw new UsageError(
      `"${words[0]}" is not a command. Did you mean: hearth ${meant}? (To give it as a task: hearth -p "${words[0]}")`,
    );
  }
  const atTerminal = process.stdin.isTTY === true;
  if (flags.interactive && !atTerminal)
    throw new UsageError(
      'Interactive mode needs a terminal. Give the task as an argument instead: hearth "..."',
    );
  const piped = flags.interactive ? '' : await readPipedStdin();
  if (piped) task = task ? `${task}\n\n${piped}` : piped;
  const runtime = await runtimeFromFlags(flags);
  try {
    if (flags.skill !== undefined) {
      const skill = runtime.commands.find((c) => c.name === flags.skill);
      if (!skill) {
        const names = runtime.commands.map((c) => c.name);
        throw new UsageError(
          `No skill named "${flags.skill}".${names.length ? ` Skills: ${names.join(', ')}.` : ' See: hearth skills list'}`,
        );
      }
      task = skill.task(task);
    }
    const store = runtime.openStore();
    const resume = flags.resume
      ? store.resolve(flags.resume)
      : flags.continue
        ? store.latest(runtime.workspace)
        : undefined;
    if (flags.continue && !resume)
      throw new UsageError(`No earlier session in ${runtime.workspace} to continue.`);
    const last = resume && !task ? store.messages(resume.id).at(-1) : undefined;
    const finished = last?.role === 'assistant' && !last.tool_calls?.length;
    // With nothing to do at a terminal, talk; a session stopped mid-task still carries on by itself.
    const interactive =
      flags.interactive === true || (atTerminal && !task && !flags.json && (!resume || finished));
    if (flags.print && flags.interactive)
      throw new UsageError('--print and --interactive contradict each other.');
    if (flags.approve && !resume)
      throw new UsageError('--approve answers a paused session: use it with --resume ID.');
    if (flags.image && (interactive || !task))
      throw new UsageError(
        '--image goes with a task in one-shot mode: hearth --image FILE "what to do with it"',
      );
    if (interactive && !flags.print && !flags.approve) {
      // The prompt should come up at once: probe the server while the sandbox makes its trial run.
      // With no server yet the REPL still opens: sessions can be listed and resumed meanwhile.
      const [connected] = await Promise.all([
        resolveConnection(runtime.config).then(
          (connection) => ({ connection, error: undefined }),
          (err: unknown) => {
            if (!(err instanceof ConnectionError || err instanceof DiscoveryError)) throw err;
            return { connection: undefined, error: (err as Error).message };
          },
        ),
        runtime.sandbox(),
      ]);
      return await runRepl({
        runtime,
        connection: connected.connection,
        connectionError: connected.error,
        firstTask: task || undefined,
        resume,
        deepWork: flags.deep === true,
        planFirst: flags.plan === true,
        version,
      });
    }
    if (!task && !resume) {
      throw new UsageError('No task given. Usage: hearth "what to do" (see hearth --help)');
    }
    if (finished) {
      throw new UsageError(
        `Session ${resume!.id} finished its last task. Say what to do next: hearth --resume ${resume!.id} "..."`,
      );
    }
    const connection = await resolveConnection(runtime.config);
    return await runOneShot({
      runtime,
      connection,
      task: task || undefined,
      resume,
      json: flags.json === true,
      deepWork: flags.deep === true,
      pauseForApproval: flags.pauseForApproval === true,
      plan: flags.plan === true,
      approved: flags.approve && (flags.approve.includes('all') ? 'all' : flags.approve),
      images: flags.image,
    });
  } finally {
    await runtime.close();
  }
}

/** Reads stdin when something is piped or redirected in; never waits on a terminal. */
async function readPipedStdin(): Promise<string> {
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(0);
  } catch {
    return '';
  }
  // Shell pipes are FIFOs; programs that spawn hearth usually hand it a socket pair.
  if (!stat.isFIFO() && !stat.isFile() && !stat.isSocket()) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // Verbatim but for the trailing newline(s): a diff's first line may start with a space that matters.
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? '' : text.replace(/\s+$/, '');
}
