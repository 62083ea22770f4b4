/**
 * The mechanical verifier: checks that cost no model tokens, run between the coder and the
 * reviewer. Files are only read on the host (parsed as data); anything that executes (node --check,
 * py_compile, the plan's commands) runs in the sandbox, since the coder wrote those files.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { shellQuote } from '../sandbox/host-command.js';
import type { Sandbox } from '../sandbox/types.js';
import { isWithin } from '../sandbox/workspace.js';
import { realpathLoose } from '../util/real-path.js';

export interface VerifyInput {
  workspace: string;
  sandbox: Sandbox;
  /** The files the task claims to create or change, relative to the workspace. */
  files: string[];
  /** The coder's todo list, when it kept one. */
  todos: Array<{ text: string; status: string }>;
  /** Build, test and lint commands of the plan, run in the workspace. */
  commands: string[];
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Files larger than this are not parsed on the host. */
const PARSE_LIMIT = 4 * 1024 * 1024;
const OUTPUT_TAIL = 1500;

/** Per extension, the command that checks a file's syntax where the tool exists (exit 127: skipped). */
const CHECKERS: Record<string, (file: string) => string> = {
  '.js': (f) => `node --check ${f}`,
  '.mjs': (f) => `node --check ${f}`,
  '.cjs': (f) => `node --check ${f}`,
  '.py': (f) => `PYTHONPYCACHEPREFIX=/tmp/hearth-pycache python3 -m py_compile ${f}`,
};

/** Findings, in words the coder can act on; empty when everything holds. */
export async function verifyTask(input: VerifyInput): Promise<string[]> {
  const findings: string[] = [];
  for (const file of input.files) findings.push(...(await checkFile(input, file)));
  const open = input.todos.filter((t) => t.status !== 'done' && t.status !== 'cancelled');
  if (open.length > 0) {
    findings.push(`Your todo list still has open items: ${open.map((t) => t.text).join('; ')}.`);
  }
  // The commands only say something once the files are there.
  if (findings.length > 0) return findings;
  for (const command of input.commands) {
    const r = await exec(input, command);
    if (r.exitCode !== 0) {
      const why = r.timedOut ? 'timed out' : `exited with ${r.exitCode ?? r.signal}`;
      findings.push(`\`${command}\` ${why}:\n${r.output.slice(-OUTPUT_TAIL)}`);
    }
  }
  return findings;
}

async function checkFile(input: VerifyInput, file: string): Promise<string[]> {
  const abs = path.resolve(input.workspace, file);
  const real = await realpathLoose(abs);
  if (!isWithin(input.workspace, abs) || !real.ok || !isWithin(input.workspace, real.real)) {
    return [`${file} is outside the workspace; every file must stay inside it.`];
  }
  if (!real.exists) return [`${file} does not exist, though the task is to create or change it.`];
  const info = await stat(real.real);
  if (!info.isFile()) return [`${file} is not a file.`];
  const ext = path.extname(file).toLowerCase();
  if ((ext === '.json' || ext === '.yaml' || ext === '.yml') && info.size <= PARSE_LIMIT) {
    const text = await readFile(real.real, 'utf8');
    try {
      if (ext === '.json') JSON.parse(text);
      else parseYaml(text);
    } catch (err) {
      return [`${file} does not parse: ${(err as Error).message.split('\n')[0]}`];
    }
  }
  const checker = CHECKERS[ext];
  if (!checker) return [];
  const r = await exec(input, checker(shellQuote(path.relative(input.workspace, real.real))));
  if (r.exitCode === 0 || r.exitCode === 127) return [];
  return [`${file} has a syntax error:\n${r.output.slice(-OUTPUT_TAIL)}`];
}

function exec(input: VerifyInput, command: string) {
  return input.sandbox.exec({
    command,
    cwd: input.workspace,
    timeoutMs: input.timeoutMs,
    signal: input.signal,
  });
}
