/**
 * Which commands and gateway surfaces the acceptance tests ran through the installed bin.
 *
 * Each use is recorded as it happens (test/support/cli.ts records every command line it starts,
 * test/acceptance/support.ts every gateway request and browser connection) into one JSON-lines file
 * per worker under the run's coverage folder. After a run of the whole acceptance project,
 * `uncovered` compares them with what the installed bin offers: the commands its `--help` lists
 * and the operations of its gateway's OpenAPI document (kept by the test that reads `/doc`). A
 * command or route added without an acceptance test fails the run there.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCommandLine } from '../../../src/cli/program.js';
import { provided } from '../../support/provided.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's acceptance tests record what they used. */
    acceptanceCoverage?: string;
  }
}

export type Use =
  | { kind: 'argv'; argv: string[]; terminal: boolean }
  | { kind: 'http'; method: string; path: string }
  | { kind: 'openapi'; operations: string[] };

/** Records a use, when running in the acceptance project (elsewhere nothing is recorded). */
export function recordUse(use: Use): void {
  const dir = provided('acceptanceCoverage');
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify(use)}\n`);
}

function readUses(dir: string): Use[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return [];
  }
  return files.flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Use),
  );
}

/** The top-level commands in a `--help` text (commander's "Commands:" section). */
export function commandsInHelp(help: string): string[] {
  // The section runs to the first blank line (the examples after it are indented too).
  const section = (help.split(/^Commands:$/m)[1] ?? '').split(/\n\s*\n/)[0]!;
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!).filter((name) => name !== 'help');
}

/** `get /api/sessions/{id}` → a pattern a concrete request path matches. */
function operationPattern(operation: string): RegExp {
  const [method, path] = operation.split(' ');
  const body = path!.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${method!.toUpperCase()} ${body}$`);
}

/**
 * What no acceptance test used: commands (and the one-shot task, `--json` and the REPL on a
 * terminal, which are the main command's surfaces) and gateway operations.
 */
export function uncovered(dir: string, commands: string[]): string[] {
  const uses = readUses(dir);
  const runs = uses.filter((u): u is Extract<Use, { kind: 'argv' }> => u.kind === 'argv');
  // `hearth plan the refactor of auth` names a command but is a task: the CLI's own rule decides.
  const commandOf = (argv: string[]) =>
    readCommandLine(['node', 'hearth', ...argv]).kind === 'task'
      ? undefined
      : argv.find((word) => commands.includes(word));
  const missing: string[] = [];
  for (const command of commands) {
    if (!runs.some((r) => commandOf(r.argv) === command)) missing.push(`command: hearth ${command}`);
  }
  const tasks = runs.filter((r) => commandOf(r.argv) === undefined && !r.argv.includes('--version'));
  if (!tasks.some((r) => !r.terminal && !r.argv.includes('--json'))) missing.push('a one-shot task');
  if (!tasks.some((r) => r.argv.includes('--json'))) missing.push('a one-shot task with --json');
  if (!tasks.some((r) => r.terminal)) missing.push('the REPL on a terminal');

  const documents = uses.filter((u): u is Extract<Use, { kind: 'openapi' }> => u.kind === 'openapi');
  if (documents.length === 0) {
    missing.push('the gateway OpenAPI document (no test read /doc through the installed gateway)');
    return missing;
  }
  const requests = uses
    .filter((u): u is Extract<Use, { kind: 'http' }> => u.kind === 'http')
    .map((u) => `${u.method.toUpperCase()} ${u.path.split('?')[0]}`);
  for (const operation of new Set(documents.flatMap((d) => d.operations))) {
    const pattern = operationPattern(operation);
    if (!requests.some((r) => pattern.test(r))) missing.push(`gateway: ${operation}`);
  }
  return missing;
}
