/**
 * The plan pipeline through the installed bin: `hearth plan add`, `hearth pipeline run` with and
 * without --yolo, and what status, events and the report say afterwards. A run nobody can answer
 * approval questions for says so at its start, and a task whose writes were declined names them
 * and the fix instead of ending as a puzzle ("alpha.txt does not exist").
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, roleOf, type Script } from '../pipeline/support.js';
import { useCliHarness } from '../support/cli-harness.js';

const cli = useCliHarness('acc-pipeline');

const ALPHA: Script = {
  tasks: [{ title: 'alpha', files: ['alpha.txt'], acceptance: ['alpha.txt says hello'] }],
  coder: (title) => ({ [`${title}.txt`]: 'hello\n' }),
};
const BETA: Script = { ...ALPHA, tasks: [{ title: 'beta', files: ['beta.txt'] }] };

async function hearth(args: string[]) {
  const r = await cli.run(args);
  expect(r.code, `hearth ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

function gitRepo(ws: string): void {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ws, env: { PATH: process.env.PATH, HOME: cli.home } });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('commit', '-q', '--allow-empty', '-m', 'start');
}

/** Serves the roles of `script`; counts the coder's rounds (requests that bring it a new brief or findings). */
async function serveRoles(script: () => Script) {
  const reviews = new Map<string, number>();
  const rounds = { coder: 0 };
  await cli.serve({
    extraRoutes: {
      'POST /v1/chat/completions': (_req, body) => {
        const request = body as Parameters<typeof answer>[2];
        if (roleOf(request) === 'coder' && request.messages.at(-1)?.role === 'user') rounds.coder++;
        return { json: answer(script(), reviews, request) };
      },
    },
  });
  return rounds;
}

async function addPlan(name: string, markdown: string) {
  await writeFile(join(cli.home, name), markdown);
  const added = await hearth(['plan', 'add', join(cli.home, name)]);
  expect(added.stdout).toMatch(/Stored plan #\d+/);
}

describe('hearth pipeline run', () => {
  it('without --yolo says at its start that writes will be declined, and the task names the declined calls and the fix', async () => {
    let script = ALPHA;
    const rounds = await serveRoles(() => script);
    gitRepo(cli.workspace);
    await addPlan('alpha.md', '# Alpha\n\nWrite alpha.txt saying hello.');

    const run = await hearth(['pipeline', 'run']);
    const lines = run.stdout.split('\n');
    const warned = lines.findIndex((l) => /declined/.test(l) && /--yolo/.test(l));
    const planned = lines.findIndex((l) => /plan #1: 1 tasks/.test(l));
    expect(warned, run.stdout).toBeGreaterThanOrEqual(0);
    // Said before the planner's request: before any model time is spent.
    expect(warned, run.stdout).toBeLessThan(planned);
    expect(lines[warned]).toMatch(/permission_mode/);
    // The declined write is named with the fix, and the task fails saying so after one round.
    expect(run.stdout).toMatch(/task #1: .*declined.*write_file alpha\.txt/);
    expect(run.stdout).toMatch(/task #1: failed \(.*write_file alpha\.txt.*--yolo/);
    expect(run.stdout).not.toMatch(/impasse/);
    expect(rounds.coder).toBe(1);
    expect(existsSync(join(cli.workspace, 'alpha.txt'))).toBe(false);

    const status = (await hearth(['pipeline', 'status'])).stdout;
    expect(status).toMatch(/failed\s+alpha .*write_file alpha\.txt.*--yolo/);
    expect((await hearth(['pipeline', 'events'])).stdout).toMatch(/declined.*write_file alpha\.txt/);
    const report = (await hearth(['pipeline', 'report'])).stdout;
    expect(report).toMatch(/declined in task #1 alpha: write_file alpha\.txt/);
    expect(report).toMatch(/--yolo/);

    // The fix, as it says: again with --yolo, which writes the file and says nothing of declines.
    expect((await hearth(['pipeline', 'retry-failed'])).stdout).toMatch(/1 failed task/);
    const yolo = await hearth(['pipeline', 'run', '--yolo']);
    expect(yolo.stdout).not.toMatch(/declined/);
    expect(yolo.stdout).toMatch(/task #1: done/);
    expect(existsSync(join(cli.workspace, 'alpha.txt'))).toBe(true);

    // Or the pipeline's own setting, which also serves hearth worker (no --yolo there).
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ pipeline: { permission_mode: 'auto' } }),
    );
    script = BETA;
    await addPlan('beta.md', '# Beta\n\nWrite beta.txt saying hello.');
    const set = await hearth(['pipeline', 'run']);
    expect(set.stdout).not.toMatch(/declined/);
    expect(set.stdout).toMatch(/task #1: done/);
    expect(existsSync(join(cli.workspace, 'beta.txt'))).toBe(true);
    const report2 = (await hearth(['pipeline', 'report', '2'])).stdout;
    expect(report2).not.toMatch(/declined/);
  }, 240_000);
});
