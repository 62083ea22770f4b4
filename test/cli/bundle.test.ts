import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What each way of starting the CLI loads before it can answer, read from the bundle's metafile
 * (scripts/build-cli.mjs). Start-up time is measured in `npm run bench`; this keeps its causes
 * from creeping back: a static import of a heavy module from the command-line description makes
 * `--help` pay for it.
 */
const metaPath = fileURLToPath(new URL('../../dist/cli/meta.json', import.meta.url));

interface Output {
  entryPoint?: string;
  imports: Array<{ path: string; kind: string; external?: boolean }>;
  inputs: Record<string, unknown>;
}

function staticallyLoaded(entry: string): { inputs: string[]; externals: string[] } {
  if (!existsSync(metaPath))
    throw new Error(`${metaPath} is missing: run npm run build first (npm test does).`);
  const { outputs } = JSON.parse(readFileSync(metaPath, 'utf8')) as { outputs: Record<string, Output> };
  const start = Object.keys(outputs).find((key) => outputs[key]!.entryPoint === entry);
  if (!start) throw new Error(`no output for ${entry}`);
  const seen = new Set<string>();
  const externals = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of outputs[file]!.imports) {
      if (i.kind !== 'import-statement') continue;
      if (i.external) externals.add(i.path);
      else queue.push(i.path);
    }
  }
  const inputs = [...seen].flatMap((file) => Object.keys(outputs[file]!.inputs));
  return { inputs, externals: [...externals] };
}

const packageOf = (input: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1];

describe('the bundled CLI', () => {
  it('answers --version from its entry alone', () => {
    const { inputs, externals } = staticallyLoaded('src/cli/main.ts');
    expect(inputs.sort()).toEqual(['package.json', 'src/cli/main.ts', 'src/util/version.ts']);
    expect(externals.filter((e) => !e.startsWith('node:'))).toEqual([]);
  });

  it('describes the command line (--help) with commander and nothing heavy', () => {
    const { inputs, externals } = staticallyLoaded('src/cli/program.ts');
    const packages = new Set(inputs.map(packageOf).filter(Boolean));
    expect([...packages]).toEqual(['commander']);
    // Besides the CLI's own description, only modules without imports: the schedule forms, the edit
    // distance (telling a task from a mistyped command) and the version.
    expect(inputs.filter((i) => i.startsWith('src/') && !i.startsWith('src/cli/')).sort()).toEqual([
      'src/scheduler/schedule-formats.ts',
      'src/util/levenshtein.ts',
      'src/util/version.ts',
    ]);
    expect(externals.filter((e) => !e.startsWith('node:'))).toEqual([]);
  });

  it('runs a task without the REPL, the subcommands or the YAML parser', () => {
    const { inputs } = staticallyLoaded('src/cli/task-command.ts');
    expect(inputs.filter((i) => /src\/cli\/(repl|commands)\//.test(i))).toEqual([]);
    expect(inputs.filter((i) => packageOf(i) === 'yaml')).toEqual([]);
  });
});
