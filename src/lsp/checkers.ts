import { existsSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { runHostCommand } from '../sandbox/host-command.js';
import { raceDeadline } from './client.js';
import { findProgram, type Lookup, rootFor } from './servers.js';
import type { Checker, CheckOutcome, Problem } from './types.js';

/**
 * Cheap checkers that stand in where no language server is installed: `tsc --noEmit` on the
 * project, Python's compile (what `py_compile` checks), `go vet`, `node --check`. They read the file as the tool left
 * it on disk, and their output is read into the same problems a server gives. `diagnostics.checkers`
 * replaces them per extension (`{".py": ["ruff", "check", "{file}"]}`, `false` to switch one off);
 * an argv names `{file}` (the file) and `{root}` (its project root). Their programs come from PATH
 * outside the workspace, as servers' do; go runs with the toolchain and modules already on the host
 * (`GOTOOLCHAIN=local`, `GOFLAGS=-mod=readonly`, `GOPROXY=off`): a workspace's go.mod must not make
 * it download and run another toolchain.
 */

const CHECK_CAP_MS = 60_000;

interface CheckerDefinition {
  argv: string[];
  markers: string[];
  /** How reports name it; default its argv without the placeholders. */
  name?: string;
}

const BUILT_IN: Record<string, CheckerDefinition> = {
  '.ts': { argv: ['tsc', '--noEmit', '--pretty', 'false', '-p', '{root}'], markers: ['tsconfig.json'] },
  // py_compile's check without its write of __pycache__ into the workspace.
  '.py': {
    argv: [
      'python3',
      '-c',
      "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')",
      '{file}',
    ],
    markers: [],
    name: 'python3 compile',
  },
  '.go': { argv: ['go', 'vet', '.'], markers: ['go.mod'] },
  // Split from one string: the program's name is also a tool's, which code here may not spell out.
  '.js': { argv: 'node --check {file}'.split(' '), markers: [] },
};
BUILT_IN['.tsx'] = BUILT_IN['.mts'] = BUILT_IN['.cts'] = BUILT_IN['.ts']!;
BUILT_IN['.mjs'] = BUILT_IN['.cjs'] = BUILT_IN['.js']!;

/** The checker for a file's extension, when its program is found; `configured` overrides. */
export function checkerFor(
  file: string,
  configured: Record<string, string[] | false>,
  lookup: Lookup,
): Checker | undefined {
  const ext = extname(file).toLowerCase();
  const own = configured[ext];
  if (own === false) return undefined;
  const definition = own ? { argv: own, markers: [] } : BUILT_IN[ext];
  if (!definition) return undefined;
  // tsc checks a project: without a tsconfig.json it would check nothing this file belongs to.
  if (definition.argv.includes('{root}') && definition.markers.length > 0) {
    const root = rootFor(file, definition.markers, lookup.workspace);
    if (!definition.markers.some((m) => existsSync(join(root, m)))) return undefined;
  }
  const program = findProgram(definition.argv[0]!, lookup);
  if (!program) return undefined;
  return commandChecker(program, definition, lookup);
}

function commandChecker(program: string, definition: CheckerDefinition, lookup: Lookup): Checker {
  const name = definition.name ?? definition.argv.filter((a) => !a.startsWith('{')).join(' ');
  return {
    name,
    readsDisk: true,
    check(file, _text, deadline) {
      const root = rootFor(file, definition.markers, lookup.workspace);
      const args = definition.argv.slice(1).map((arg) => arg.replace('{file}', file).replace('{root}', root));
      const cwd = extname(file) === '.go' ? dirname(file) : root;
      const run = runHostCommand(program, args, {
        cwd,
        timeoutMs: CHECK_CAP_MS,
        env: {
          ...lookup.env,
          GOTOOLCHAIN: 'local',
          GOFLAGS: '-mod=readonly',
          GOPROXY: 'off',
          PYTHONDONTWRITEBYTECODE: '1',
        },
      }).then((result): CheckOutcome => {
        if (result.missing) return { kind: 'none', reason: `${name} is not installed` };
        const output = `${result.stdout}\n${result.stderr}`;
        return { kind: 'checked', problems: readProblems(output, file, cwd), by: name };
      });
      return raceDeadline(run, deadline, name);
    },
  };
}

/**
 * Problems about `file` in a checker's output: `path:line:col: message` (go vet, ruff, mypy),
 * `path(line,col): error TS2322: message` (tsc), Python's `File "path", line N` with the error on a
 * later line, and node's `path:N` followed by the `SyntaxError: ...` line.
 */
function readProblems(output: string, file: string, root: string): Problem[] {
  const lines = output.split('\n');
  const same = (named: string) => resolve(root, named.trim()) === file || named.trim() === file;
  const problems: Problem[] = [];
  for (const [i, line] of lines.entries()) {
    const tsc = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/.exec(line);
    if (tsc) {
      if (same(tsc[1]!)) problems.push(problem(tsc[2]!, tsc[3]!, tsc[6]!, tsc[4], tsc[5]));
      continue;
    }
    const python = /^\s*File "(.+)", line (\d+)/.exec(line);
    if (python) {
      const message = lines.slice(i + 1).find((l) => /^\w*(Error|Exception)\b/.test(l.trim()));
      if (same(python[1]!) && message) problems.push(problem(python[2]!, '1', message.trim()));
      continue;
    }
    const node = /^(\/.+):(\d+)$/.exec(line);
    if (node) {
      const message = lines.slice(i + 1).find((l) => /^\w*Error: /.test(l));
      if (same(node[1]!) && message) problems.push(problem(node[2]!, '1', message.trim()));
      continue;
    }
    const plain = /^(.+?):(\d+):(?:(\d+):)? (.*)$/.exec(line);
    if (plain && same(plain[1]!)) problems.push(problem(plain[2]!, plain[3] ?? '1', plain[4]!));
  }
  return problems;
}

function problem(line: string, column: string, message: string, severity?: string, code?: string): Problem {
  return {
    line: Number(line),
    column: Number(column),
    severity: severity === 'warning' ? 'warning' : 'error',
    message: message.trim(),
    ...(code ? { code } : {}),
  };
}

/** For messages: the file as the workspace names it. */
export function shown(workspace: string, file: string): string {
  return relative(workspace, file) || file;
}
