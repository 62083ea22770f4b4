/**
 * The pipeline's quality gate through the installed bin over real git: in block mode a coder round
 * that leaves a placeholder goes back to the coder and never reaches a commit; in warn mode the
 * findings go to the reviewer, into the review log and `quality-report.json` committed beside it,
 * and into `hearth pipeline report`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, roleOf, type Script } from '../pipeline/support.js';
import { useCliHarness } from '../support/cli-harness.js';

const cli = useCliHarness('acc-quality');

const PLACEHOLDER = 'def add(a, b):\n    # TODO: implement\n    pass\n';
const REAL = 'def add(a, b):\n    return a + b\n';

async function hearth(args: string[]) {
  const r = await cli.run(args);
  expect(r.code, `hearth ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: cli.workspace,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cli.home },
  });

async function settings(mode: string) {
  await mkdir(cli.hearthHome, { recursive: true });
  await writeFile(
    join(cli.hearthHome, 'config.json'),
    JSON.stringify({ pipeline: { permission_mode: 'auto', quality_gate_mode: mode } }),
  );
}

describe('the pipeline quality gate', () => {
  it('blocks a placeholder commit in block mode and warns in warn mode', async () => {
    let script: Script = {
      tasks: [{ title: 'calc', files: ['calc.py'] }],
      // The first round leaves a placeholder; the findings bring the real body.
      coder: (_title, round) => ({ 'calc.py': round === 1 ? PLACEHOLDER : REAL }),
    };
    const reviewed: string[] = [];
    const reviews = new Map<string, number>();
    await cli.serve({
      extraRoutes: {
        'POST /v1/chat/completions': (_req, body) => {
          const request = body as Parameters<typeof answer>[2];
          if (roleOf(request) === 'reviewer') reviewed.push(String(request.messages.at(-1)?.content));
          return { json: answer(script, reviews, request) };
        },
      },
    });
    git('init', '-q', '-b', 'main');
    git('config', 'user.name', 'Test Person');
    git('config', 'user.email', 'test@example.com');
    git('commit', '-q', '--allow-empty', '-m', 'start');

    await settings('block');
    await writeFile(join(cli.home, 'calc.md'), '# Calc\n\nWrite add in calc.py.');
    await hearth(['plan', 'add', join(cli.home, 'calc.md')]);
    const blocked = await hearth(['pipeline', 'run']);
    expect(blocked.stdout).toMatch(/task #1: quality gate blocked it: .*calc\.py:2: placeholder left/);
    expect(blocked.stdout).toMatch(/task #1: done/);
    // The placeholder never reached a commit or the reviewer; the real body did.
    expect(git('log', '-p', '--all', '--', 'calc.py')).not.toMatch(/TODO: implement/);
    expect(git('show', 'HEAD:.hearth-pipeline/1/review-log.md')).toMatch(/quality gate blocked it/);
    expect(git('show', 'HEAD:calc.py')).toBe(REAL);
    expect(reviewed.join('\n')).not.toMatch(/TODO: implement/);
    expect((await hearth(['pipeline', 'report', '1'])).stdout).toMatch(/quality gate: sent back 1 round/);

    await settings('warn');
    script = {
      tasks: [{ title: 'stub', files: ['stub.py'] }],
      coder: () => ({ 'stub.py': PLACEHOLDER.replace('add', 'sub') }),
    };
    await writeFile(join(cli.home, 'stub.md'), '# Stub\n\nWrite sub in stub.py.');
    await hearth(['plan', 'add', join(cli.home, 'stub.md')]);
    const warned = await hearth(['pipeline', 'run']);
    expect(warned.stdout).toMatch(/task #1: quality gate warns: .*stub\.py:2: placeholder left/);
    expect(warned.stdout).toMatch(/task #1: done/);
    expect(git('show', 'HEAD:stub.py')).toMatch(/TODO: implement/);
    // In the task's review: the reviewer was told, and the committed review log says it.
    expect(reviewed.at(-1)).toMatch(/quality gate warns[\s\S]*stub\.py:2: placeholder left/);
    expect(git('show', 'HEAD:.hearth-pipeline/2/review-log.md')).toMatch(/quality gate warns/);
    const file = JSON.parse(git('show', 'HEAD:.hearth-pipeline/2/quality-report.json'));
    expect(file.quality[0]).toMatchObject({ seq: 1, mode: 'warn', blocked: false });
    expect(JSON.stringify(file.quality[0].findings)).toMatch(/stub\.py:2: placeholder left/);
    const report = (await hearth(['pipeline', 'report', '2'])).stdout;
    expect(report).toMatch(
      /quality gate on task #1 stub \(warn\):\n\s+- \[major\] stub\.py:1: the body is only `pass`\n\s+- \[major\] stub\.py:2: placeholder left/,
    );
    expect(report).toMatch(/quality-report\.json/);
  }, 240_000);
});
