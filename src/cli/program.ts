import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config/load.js';
import { DiscoveryError } from '../llm/discover.js';
import { ConnectionError, resolveConnection } from './connect.js';
import { runOneShot } from './run-task.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const HELP_AFTER = `
Examples:
  hearth "summarise README.md and write it to SUMMARY.md" --yolo
  git diff | hearth "review this change"
  hearth --base-url http://127.0.0.1:8080/v1 -m qwen2.5-coder "list the TODOs in src/"
  hearth --json "what is in this folder?"      (events as JSON lines)

Without --yolo, tools that change files or run commands are declined and the model is told so.

Server: with no --base-url, Hearth tries LM Studio (:1234), Ollama (:11434), llama.cpp (:8080)
and vLLM (:8000) on 127.0.0.1 and uses the first that answers, with its loaded model.

Environment: HEARTH_BASE_URL, HEARTH_MODEL, HEARTH_API_KEY, HEARTH_MAX_ITERATIONS, HEARTH_TIMEOUT.
Config files (JSON, later wins): ~/.hearth/config.json, <workspace>/.hearth/config.json.

Exit codes: 0 done, 1 error, 2 stopped at max iterations, 130 interrupted.`;

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number');
  return n;
}

interface Flags {
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  workspace: string;
  json?: boolean;
  yolo?: boolean;
  maxIterations?: number;
  timeout?: number;
}

export function buildProgram(): Command {
  const program = new Command('hearth')
    .description(
      'A local-first AI agent for OpenAI-compatible model servers (LM Studio, Ollama, llama.cpp, vLLM).',
    )
    .version(version, '-v, --version')
    .argument('[task...]', 'what to do; piped stdin is appended to it')
    .option('-m, --model <name>', "model to use (default: the server's loaded or first chat model)")
    .option('--base-url <url>', 'OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1')
    .option('--api-key <key>', 'API key, if the server wants one')
    .option('-C, --workspace <dir>', 'the folder the agent works in', '.')
    .option('--json', 'print every event as one JSON line instead of text')
    .option('--yolo', 'let the agent write files and run commands without asking')
    .option('--max-iterations <n>', 'stop after this many model turns (default 50)', positiveInt)
    .addOption(
      new Option('--timeout <seconds>', 'limit for one model request (default 600)').argParser(
        positiveNumber,
      ),
    )
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(run hearth --help for usage)')
    .action(async (words: string[], flags: Flags) => {
      process.exitCode = await main(words, flags);
    });
  return program;
}

async function main(words: string[], flags: Flags): Promise<number> {
  const workspace = resolve(flags.workspace);
  let task = words.join(' ').trim();
  const piped = await readPipedStdin();
  if (piped) task = task ? `${task}\n\n${piped}` : piped;
  if (!task) {
    process.stderr.write('No task given. Usage: hearth "what to do" (see hearth --help)\n');
    return 1;
  }
  try {
    const config = await loadConfig({
      workspace,
      flags: {
        model: flags.model,
        base_url: flags.baseUrl,
        api_key: flags.apiKey,
        max_iterations: flags.maxIterations,
        timeout: flags.timeout,
      },
    });
    const connection = await resolveConnection(config);
    return await runOneShot({
      task,
      workspace,
      config,
      connection,
      json: flags.json === true,
      yolo: flags.yolo === true,
    });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ConnectionError || err instanceof DiscoveryError) {
      process.stderr.write(`hearth: ${err.message}\n`);
      return 1;
    }
    throw err;
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
  return Buffer.concat(chunks).toString('utf8').trim();
}
