import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { trustProject } from '../../src/config/trust.js';
import { defineJob, type JobFiles, loadJobFiles } from '../../src/scheduler/job-definitions.js';

let dir: string;
let files: JobFiles;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-jobs-'));
  const home = join(dir, 'home');
  const workspace = join(dir, 'ws');
  await mkdir(join(workspace, '.hearth'), { recursive: true });
  await mkdir(home, { recursive: true });
  files = {
    user: join(home, 'cron.json'),
    workspace: join(workspace, '.hearth', 'cron.json'),
    workspaceDir: workspace,
    userDir: home,
  };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// The entry as the agent_computer seed's README shows it (workspace/cron.json).
const seedEntry = {
  id: 'daily-check',
  name: 'Daily status check',
  schedule: 'daily 09:00',
  prompt: 'Check system status and summarize any issues.',
  session_id: 'cron-daily-check',
  enabled: true,
};

describe('job definitions', () => {
  it("reads the seed's cron.json entries, with our defaults", () => {
    const job = defineJob(seedEntry, 'cron.json', '/work');
    expect(job).toMatchObject({
      id: 'daily-check',
      sessionId: 'cron-daily-check',
      workspace: '/work',
      catchUp: 'once',
      overlap: 'skip',
      enabled: true,
    });
    expect(job.schedule.kind).toBe('cron');
    expect(defineJob({ name: 'Weekly Clean-up!', schedule: '@weekly', prompt: 'p' }, 'x', '/w').id).toBe(
      'weekly-clean-up',
    );
  });

  it('names the field that is wrong', () => {
    expect(() => defineJob({ name: 'x', schedule: 'daily 9am', prompt: 'p' }, 'x', '/w')).toThrow(
      /Unknown schedule "daily 9am"/,
    );
    expect(() =>
      defineJob({ name: 'x', schedule: '@daily', prompt: 'p', catch_up: 'sometimes' }, 'x', '/w'),
    ).toThrow(/catch_up/);
    expect(() => defineJob({ name: 'x', schedule: '@daily', prompt: 'p', every: 3 }, 'x', '/w')).toThrow(
      /every/,
    );
  });

  it('loads the user file, and the workspace file only once approved as it is', async () => {
    await writeFile(files.user, JSON.stringify([seedEntry]));
    await writeFile(
      files.workspace,
      JSON.stringify([{ id: 'w', name: 'w', schedule: '@hourly', prompt: 'p' }]),
    );
    let loaded = await loadJobFiles(files);
    expect(loaded.jobs.map((j) => j.id)).toEqual(['daily-check']);
    expect(loaded.problems[0]).toMatch(
      /not loaded: its jobs run only once you approve them.*hearth jobs trust/,
    );

    await trustProject(files.userDir, files.workspace);
    loaded = await loadJobFiles(files);
    expect(loaded.jobs.map((j) => [j.id, j.workspace])).toEqual([
      ['daily-check', files.workspaceDir],
      ['w', files.workspaceDir],
    ]);

    // Changed after approval (say, by a command the agent ran): not loaded until approved again.
    await writeFile(
      files.workspace,
      JSON.stringify([{ id: 'w', name: 'w', schedule: '@hourly', prompt: 'rm -rf' }]),
    );
    loaded = await loadJobFiles(files);
    expect(loaded.jobs.map((j) => j.id)).toEqual(['daily-check']);
    expect(loaded.problems[0]).toMatch(/changed since you approved it/);
  });

  it("keeps a project's jobs in the project, and reports bad entries without losing the good ones", async () => {
    await writeFile(
      files.workspace,
      JSON.stringify([
        { id: 'escape', name: 'e', schedule: '@daily', prompt: 'p', workspace: '/' },
        { id: 'ok', name: 'ok', schedule: '@daily', prompt: 'p' },
        { id: 'ok', name: 'again', schedule: '@daily', prompt: 'p' },
        { id: 'bad', name: 'bad', schedule: 'sometimes', prompt: 'p' },
      ]),
    );
    await trustProject(files.userDir, files.workspace);
    const loaded = await loadJobFiles(files);
    expect(loaded.jobs.map((j) => j.id)).toEqual(['ok']);
    expect(loaded.problems).toEqual([
      expect.stringMatching(/job 1: a project's jobs run in the project/),
      expect.stringMatching(/job 3: id "ok" is taken/),
      expect.stringMatching(/job 4: Unknown schedule "sometimes"/),
    ]);
  });

  it('a file that is not a list of jobs is one clear problem', async () => {
    await writeFile(files.user, '{"jobs": []}');
    expect((await loadJobFiles(files)).problems).toEqual([
      expect.stringMatching(/expected a JSON array of jobs/),
    ]);
    await writeFile(files.user, '[{');
    expect((await loadJobFiles(files)).problems).toEqual([expect.stringMatching(/not valid JSON/)]);
  });
});
