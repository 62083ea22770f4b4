/**
 * The web UI's pipeline panel in headless Chromium: plans, tasks by state, who works on what now
 * and the latest transitions, updated live as another process records them, kept over a reload,
 * and pause and resume from the page reaching the flag every worker reads. The other process is
 * played by a second connection to the gateway's database, moving a task as the worker does
 * (test/server/pipeline.test.ts runs a real `hearth pipeline run` against the gateway).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PipelineControl } from '../../src/pipeline/steering.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteJournal } from '../../src/store/sqlite/journal.js';
import { SqlitePlanStore } from '../../src/store/sqlite/plans.js';
import { chromiumMissing, loggedIn, SCREENSHOTS, useWebGateway } from '../support/browser.js';

if (chromiumMissing) console.warn(chromiumMissing);

describe.skipIf(chromiumMissing !== undefined)('the pipeline panel in Chromium', () => {
  const web = useWebGateway();

  it('shows plans, tasks by state, the current role and recent transitions, live and after a reload; pauses', async () => {
    const g = await web.start();
    const db = openDatabase(g.dbPath);
    try {
      const worker = new PipelineControl(new SqlitePlanStore(db), new SqliteJournal(db), g.workspace);
      const { plans, journal } = worker;
      const record = (event: Parameters<typeof journal.record>[1]) => journal.record(g.workspace, event);
      const { plan } = await worker.addPlan('# Numbers\n\nWrite one, two and three.');
      const task = (title: string) => ({ title, description: '', files: [], depends_on: [], acceptance: [] });
      await plans.setTasks(plan.id, [task('one'), task('two'), task('three')]);
      await record({ type: 'plan_planned', planId: plan.id, tasks: 3, parts: 1 });
      const claimed = (await plans.claim('other:1', g.workspace))!;
      await plans.log(claimed, 'role', { role: 'coder', model: 'coder-model' });
      await record({ type: 'task_state', planId: plan.id, taskId: claimed.id, seq: 1, state: 'coding' });

      const { page } = await loggedIn(web.rig, g.url);
      const panel = page.getByRole('region', { name: 'Pipeline' });
      await panel.locator('li[data-plan="1"]', { hasText: '#1 Numbers' }).waitFor();
      expect(await panel.locator('.states').textContent()).toBe('1 coding · 2 pending');
      expect(await panel.locator('li[data-plan="1"] p.muted').textContent()).toContain(
        'now #1 coder (coder-model)',
      );
      const recent = panel.getByRole('list', { name: 'Recent transitions' });
      expect(await recent.locator('li').allTextContents()).toEqual([
        expect.stringMatching(/plan #1 added$/),
        expect.stringMatching(/plan #1: 3 tasks$/),
        expect.stringMatching(/task #1 coding$/),
      ]);

      // Another process moves the task on: the page follows without a reload.
      const coded = (await plans.transition(claimed, 'coded'))!;
      await record({ type: 'task_state', planId: plan.id, taskId: coded.id, seq: 1, state: 'coded' });
      await panel.locator('.states', { hasText: '1 coded · 2 pending' }).waitFor();
      await recent.locator('li', { hasText: 'task #1 coded' }).waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, 'pipeline-panel.png') });

      // Kept in the store: a reload shows the same transitions.
      await page.reload();
      await panel.locator('li', { hasText: 'task #1 coded' }).waitFor();

      // Pause from the page: the flag every worker of the workspace reads.
      await panel.getByRole('button', { name: 'Pause' }).click();
      await page.locator('section.pipeline[data-paused="yes"]').waitFor();
      expect(await journal.paused(g.workspace)).toBe(true);
      await recent.locator('li', { hasText: 'paused' }).first().waitFor();
      await panel.getByRole('button', { name: 'Resume' }).click();
      await page.locator('section.pipeline[data-paused="no"]').waitFor();
      expect(await journal.paused(g.workspace)).toBe(false);
    } finally {
      db.close();
    }
  }, 120_000);

  it('shows no pipeline panel where the workspace has no plans', async () => {
    const g = await web.start();
    const { page } = await loggedIn(web.rig, g.url);
    // Waited for once the reloaded page is committed: the page before it may have asked too, and
    // its answer's body is gone once it is navigated away from.
    await page.reload({ waitUntil: 'commit' });
    const answered = await page.waitForResponse((r) => r.url().includes('/api/pipeline'));
    expect(await answered.json()).toMatchObject({ plans: [] });
    await page.locator('main.empty').waitFor();
    // A frame after the answer: the panel has rendered whatever it would.
    await page.evaluate(
      () =>
        new Promise((resolve) =>
          (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame(
            () => resolve(undefined),
          ),
        ),
    );
    expect(await page.locator('section.pipeline').count()).toBe(0);
  }, 60_000);
});
