/**
 * The seeds' pipeline and operator features through the installed bin, over real git and the
 * scripted model: the coder's ranked file context (and `relevant_files` for the model, behind the
 * tool index), the project state file and lab notebook, and `hearth pipeline preflight`, `kpi` and
 * `reconcile`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, roleOf, type Script } from '../pipeline/support.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('acc-pipeline-seeds');

const FINDINGS = 'invoiceTotal in src/billing/invoice.ts sums the lines; there is no tax yet.';

function textReply(content: string) {
  return {
    id: 'a',
    object: 'chat.completion',
    model: 'scripted',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

async function hearth(args: string[], code = 0) {
  const r = await cli.run(args);
  expect(r.code, `hearth ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(code);
  return r;
}

const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: cli.workspace,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cli.home },
  });

/** A small project: the task's words are in one file's path and contents, others share a few. */
async function project() {
  await mkdir(join(cli.workspace, 'src', 'billing'), { recursive: true });
  await writeFile(
    join(cli.workspace, 'src', 'billing', 'invoice.ts'),
    'export function invoiceTotal(lines: number[]) {\n  return lines.reduce((a, b) => a + b, 0);\n}\n',
  );
  await writeFile(join(cli.workspace, 'src', 'greeting.ts'), 'export const greeting = "hello";\n');
  await writeFile(join(cli.workspace, 'notes.md'), 'Nothing about money here.\n');
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test Person');
  git('config', 'user.email', 'test@example.com');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
}

describe('the pipeline features of the seeds', () => {
  it("ranks the task's files for the coder, keeps PROJECT.md and the notebook, and answers preflight, kpi and reconcile", async () => {
    await project();
    const script: Script = {
      tasks: [
        {
          title: 'invoice tax',
          description: 'Add a tax rate to the invoice total.',
          files: ['src/billing/invoice.ts'],
        },
      ],
      coder: (_title, round): Record<string, string> =>
        round === 1
          ? {
              'src/billing/invoice.ts':
                'export function invoiceTotal(lines: number[], tax = 0) {\n  return lines.reduce((a, b) => a + b, 0) * (1 + tax);\n}\n',
            }
          : {},
    };
    const briefs: string[] = [];
    const analysed: string[] = [];
    const planned: string[] = [];
    const reviews = new Map<string, number>();
    await cli.serve({
      extraRoutes: {
        'POST /v1/chat/completions': (_req, body) => {
          const request = body as Parameters<typeof answer>[2];
          if (String(request.messages[0]?.content).startsWith('Count from one'))
            return { json: textReply('one two') };
          if (String(request.messages[0]?.content).startsWith('You analyse a repository')) {
            analysed.push(String(request.messages.at(-1)?.content));
            return { json: textReply(FINDINGS) };
          }
          const first = request.messages.filter((m) => m.role === 'user');
          if (roleOf(request) === 'planner') planned.push(String(request.messages.at(-1)?.content));
          if (roleOf(request) === 'coder' && first.length === 1 && request.messages.at(-1)?.role === 'user')
            briefs.push(String(first[0]!.content));
          return { json: answer(script, reviews, request) };
        },
      },
    });
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ pipeline: { permission_mode: 'auto', analyst: true } }),
    );

    // Preflight: the model is listed for every role, the workspace is clean; a stray change is named.
    const clean = await hearth(['pipeline', 'preflight']);
    expect(clean.stdout).toMatch(/ok\s+planner\s+scripted-model at http/);
    expect(clean.stdout).toMatch(/ok\s+coder /);
    expect(clean.stdout).toMatch(/ok\s+git\s+clean/);
    await writeFile(join(cli.workspace, 'stray.txt'), 'left over\n');
    expect((await hearth(['pipeline', 'preflight'])).stdout).toMatch(
      /warn\s+git\s+1 uncommitted change\(s\) \(stray\.txt\)/,
    );
    await rm(join(cli.workspace, 'stray.txt'));

    await writeFile(join(cli.home, 'tax.md'), '# Tax\n\nAdd tax to the invoice total.');
    await hearth(['plan', 'add', join(cli.home, 'tax.md')]);
    const run = await hearth(['pipeline', 'run']);
    expect(run.stdout).toMatch(/task #1: done/);

    // The analyst read the repository (the ranked file with its first lines) before the planner,
    // which got its findings with the plan; the report is in .hearth/analysis/.
    expect(run.stdout).toMatch(/plan #1: the analyst's findings are in \.hearth\/analysis\/plan-1\.md/);
    expect(analysed).toHaveLength(1);
    expect(analysed[0]).toMatch(/src\/billing\/invoice\.ts:\nexport function invoiceTotal/);
    expect(planned[0]).toContain(FINDINGS);
    expect(await readFile(join(cli.workspace, '.hearth', 'analysis', 'plan-1.md'), 'utf8')).toContain(
      FINDINGS,
    );

    // The coder's brief lists the ranked files, the task's own first, the unrelated ones not at all.
    expect(briefs).toHaveLength(1);
    const listed = /Files likely relevant, best first:\n((?:- .*\n?)+)/.exec(briefs[0]!)?.[1] ?? '';
    expect(listed.split('\n')[0]).toMatch(/^- src\/billing\/invoice\.ts \(.*invoice.*\)/);
    expect(listed).not.toContain('greeting.ts');
    expect(listed).not.toContain('notes.md');

    // The project state and the notebook, kept by the run in .hearth/.
    const state = await readFile(join(cli.workspace, '.hearth', 'PROJECT.md'), 'utf8');
    expect(state).toMatch(/Phase: complete/);
    expect(state).toMatch(/## Plan #1: Tax \(planned\)\n- \[x\] #1 invoice tax: done, [0-9a-f]{10}/);
    const notebook = await readFile(join(cli.workspace, '.hearth', 'notebook.md'), 'utf8');
    expect(notebook).toMatch(/plan #1: the analyst's findings in \.hearth\/analysis\/plan-1\.md/);
    expect(notebook).toMatch(/plan #1: planned into 1 task\(s\)/);
    expect(notebook).toMatch(/plan #1 task #1 invoice tax: review approve: fine/);
    expect(notebook).toMatch(/plan #1 task #1 invoice tax: committed [0-9a-f]{10}/);
    expect(notebook).toMatch(/plan #1 task #1 invoice tax: done/);

    // Benchmark: one model serves every role here, asked once, with its speed.
    const bench = JSON.parse((await hearth(['pipeline', 'benchmark', '--json'])).stdout);
    expect(bench).toEqual([
      expect.objectContaining({ model: 'scripted-model', roles: ['planner', 'coder', 'reviewer'], ok: true }),
    ]);
    expect(bench[0].completionTokens).toBe(5);
    expect((await hearth(['pipeline', 'benchmark'])).stdout).toMatch(
      /scripted-model\s+planner,coder,reviewer\s+\S/,
    );

    // KPIs: one task finished, first time through the checks, no rework.
    const kpi = JSON.parse((await hearth(['pipeline', 'kpi', '--json'])).stdout);
    expect(kpi.total).toMatchObject({
      finished: 1,
      failed: 0,
      reworked: 0,
      verified: 1,
      firstPassVerified: 1,
    });
    expect((await hearth(['pipeline', 'kpi'])).stdout).toMatch(/total\s+1\s+0\s+0%\s+100%/);

    // Reconcile: all agree; once the task's file is gone, the finished task is named as undone.
    expect((await hearth(['pipeline', 'reconcile'])).stdout).toMatch(
      /All 1 task\(s\) agree with the workspace/,
    );
    await rm(join(cli.workspace, 'src', 'billing', 'invoice.ts'));
    const off = await hearth(['pipeline', 'reconcile'], 1);
    expect(off.stdout).toMatch(
      /plan #1 task #1 invoice tax \(done\): recorded as finished, but missing src\/billing\/invoice\.ts/,
    );
    const json = JSON.parse((await hearth(['pipeline', 'reconcile', '--json'], 1)).stdout);
    expect(json.tasks[0]).toMatchObject({ standing: 'undone', missing: ['src/billing/invoice.ts'] });
  }, 240_000);

  it('gives the model relevant_files behind the tool index, not in the first request', async () => {
    await project();
    await cli.serve([
      reply().tool('use_tool', { name: 'relevant_files', args: { query: 'invoice total' } }),
      reply().text('Start in src/billing/invoice.ts.'),
    ]);
    const r = await hearth(['where is the invoice total computed?']);
    expect(r.stdout).toContain('Start in src/billing/invoice.ts.');
    const [first, second] = cli.server.requests;
    const tools = first!.body.tools as Array<{ function: { name: string; description: string } }>;
    expect(tools.map((t) => t.function.name)).not.toContain('relevant_files');
    expect(tools.find((t) => t.function.name === 'tool_search')!.function.description).toContain(
      'relevant_files',
    );
    const result = (second!.body.messages as Array<{ role: string; content: string }>).at(-1)!;
    expect(result.role).toBe('tool');
    expect(result.content.split('\n')[0]).toMatch(/^- src\/billing\/invoice\.ts \(invoice, total/);
    expect(result.content).not.toContain('greeting.ts');
  }, 120_000);
});
