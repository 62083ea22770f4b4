/**
 * Nobody answers approval questions during a pipeline run. A mode that asks is said before any
 * model time is spent; a task whose coder had calls declined names them and the fix and fails at
 * once rather than going round to an impasse; the report lists them. Over real parts: the pipeline
 * with a real sandbox, SQLite and agent sessions, and the scripted role server.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/pipeline/convergence.js';
import { describeReport, reportOf } from '../../src/pipeline/report.js';
import { describeEvent } from '../../src/pipeline/status.js';
import type { PipelineEvent } from '../../src/pipeline/types.js';
import { afterDeclines, coderMode, unattendedNote } from '../../src/pipeline/unattended.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { runOnce, type Script, usePipeline } from './support.js';

describe('what a run says about its permission mode', () => {
  it('says nothing in auto mode, and otherwise what will be declined and both ways to let it run', () => {
    expect(unattendedNote('auto', 0)).toBeUndefined();
    const normal = unattendedNote('normal', 0)!;
    expect(normal.mode).toBe('normal');
    expect(normal.message).toMatch(/file changes and commands will be declined/);
    expect(normal.message).toContain('--yolo');
    expect(normal.message).toContain('"pipeline": {"permission_mode": "auto"}');
    expect(unattendedNote('normal', 2)!.message).toContain('except what permissions.allow covers');
    expect(unattendedNote('manual', 0)!.message).toMatch(/every call it makes will be declined/);
    expect(unattendedNote('plan', 0)!.message).toMatch(/refused/);
  });

  it("takes the pipeline's own mode over the sessions' one", () => {
    const permissions = { mode: 'normal' as const, allow: [], deny: [] };
    const pipeline = (mode?: 'auto') => ({
      ...PIPELINE_DEFAULTS,
      ...(mode ? { permission_mode: mode } : {}),
    });
    expect(coderMode({ permissions, pipeline: pipeline() })).toBe('normal');
    expect(coderMode({ permissions, pipeline: pipeline('auto') })).toBe('auto');
  });
});

const PIPELINE_DEFAULTS = {
  commands: [],
  command_timeout: 600,
  max_rework: 3,
  quality_gate_mode: 'warn' as const,
  git: true,
  roles: {},
  batch: 4,
  swap: { mode: 'auto' as const, memory_timeout: 300, load_timeout: 900 },
  lease: 60,
  file_context: 150,
  project_state: true,
  analyst: false,
};

describe('a task judged after a round with declined calls', () => {
  async function claimed() {
    const plans = new SqlitePlanStore(openDatabase(':memory:'));
    const { plan } = await plans.addPlan('/w', '# One');
    await plans.setTasks(plan.id, [
      { title: 'one', description: '', files: [], depends_on: [], acceptance: [] },
    ]);
    return { plans, task: (await plans.claim('w', '/w'))! };
  }
  const sentBack = {
    state: 'pending' as const,
    feedback: 'The checks failed:\n- one.txt does not exist',
    rework: 0,
    signatures: {},
  };

  it('fails at once, naming the calls, the fix and what else was found', async () => {
    const { plans, task } = await claimed();
    await plans.record(task, 'declined', { calls: ['write_file one.txt'] });
    const next = await afterDeclines(plans, task, sentBack);
    expect(next.state).toBe('failed');
    const error = (next as { error: string }).error;
    expect(error).toContain('write_file one.txt');
    expect(error).toContain('hearth pipeline retry-failed, then hearth pipeline run --yolo');
    expect(error).toContain('Found meanwhile: The checks failed: one.txt does not exist');
  });

  it('keeps an approval, and does not count the declines of an earlier round', async () => {
    const { plans, task } = await claimed();
    await plans.record(task, 'declined', { calls: ['shell npm test'] });
    const approved = { state: 'approved' as const, outcome: 'done' as const, findings: [] };
    expect(await afterDeclines(plans, task, approved)).toBe(approved);
    // A later round (moved back to pending, claimed again) without declines is sent back as usual.
    await plans.transition(task, 'pending');
    const again = (await plans.claim('w', '/w'))!;
    expect(await afterDeclines(plans, again, sentBack)).toBe(sentBack);
  });
});

describe('a pipeline run whose coder may not write', () => {
  const pipeline = usePipeline();
  const ALPHA: Script = {
    tasks: [{ title: 'alpha', files: ['alpha.txt'] }],
    coder: () => ({ 'alpha.txt': 'hello\n' }),
  };

  it('records and announces the declined write, fails the task after one round saying why, and reports it', async () => {
    const { bench, server, plans } = await pipeline.start(ALPHA, '# Alpha\n\nWrite alpha.txt.');
    const events: PipelineEvent[] = [];
    await runOnce(bench, {
      baseUrl: server.baseUrl,
      mode: 'normal',
      limits: DEFAULT_LIMITS,
      onEvent: (e) => events.push(e),
    });
    expect(existsSync(path.join(bench.ws, 'alpha.txt'))).toBe(false);
    const declined = events.find((e) => e.type === 'task_declined');
    expect(declined).toMatchObject({ seq: 1, calls: ['write_file alpha.txt'] });
    expect(describeEvent(declined!)).toBe(
      'task #1: calls declined (nobody can approve them during a pipeline run): write_file alpha.txt',
    );
    const [task] = await plans.tasks();
    expect(task!.state).toBe('failed');
    expect(task!.error).toMatch(/^the coder's calls were declined .*: write_file alpha\.txt\. /);
    // One coder round: its brief, then its answer after the refusal; no rework.
    const coderBriefs = server.requests.filter((r) => {
      const messages = (r.body as { messages: Array<{ role: string; content: string }> }).messages;
      return messages.at(-1)?.role === 'user' && /^Task #1/.test(messages.at(-1)!.content);
    });
    expect(coderBriefs).toHaveLength(1);
    const report = await reportOf(plans, (await plans.plans())[0]!);
    expect(report.declined).toEqual([{ seq: 1, title: 'alpha', calls: ['write_file alpha.txt'] }]);
    expect(describeReport(report)).toContain('declined in task #1 alpha: write_file alpha.txt');
  }, 60_000);
});
