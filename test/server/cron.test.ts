/**
 * The scheduler inside the gateway (#21): the agent_computer seed's cron endpoints, a job's runs
 * and the inbox over real HTTP, a real cron.json in a temp Hearth home, real agent runs against
 * the scripted model server, and a ManualClock for the scheduler's time.
 *
 * The response shapes follow the seed's gateway (04RR/agent_computer, gateway.py and cron.py's
 * `get_status`): `{jobs: [{id, name, schedule, enabled, session_id, last_run, next_run, run_count,
 * prompt_preview}]}`, run → `{status, job, run_count}`, toggle → `{status: "enabled"|"disabled",
 * job}`, reload → `{status: "reloaded", jobs_loaded}`; times as "YYYY-MM-DD HH:MM:SS UTC".
 */

import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchedulerService } from '../../src/scheduler/service.js';
import type { RunOutcome } from '../../src/store/rows.js';
import { readSse, startGateway, type TestGateway } from '../support/gateway.js';
import { ManualClock } from '../support/manual-clock.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

/** 30 s before the job's 09:00 (UTC) slot. */
const START = Date.parse('2025-06-02T08:59:30Z');
const NINE = Date.parse('2025-06-02T09:00:00Z');
const POLL = 15_000;

const DAILY_CHECK = {
  id: 'daily-check',
  name: 'Daily status check',
  schedule: 'daily 09:00',
  timezone: 'UTC',
  prompt: 'Check system status and summarize any issues.',
  session_id: 'cron-daily-check',
  enabled: true,
};

type Json = Record<string, unknown>;
interface CronList {
  jobs: Json[];
  problems: string[];
  scheduler: { running: boolean; leader: boolean; holder_pid: number | null };
}

let home: string;
let gw: TestGateway | undefined;
const closers: Array<() => Promise<void>> = [];
beforeEach(async () => {
  home = await realpath(await mkdtemp(join(tmpdir(), 'hearth-cron-home-')));
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await gw?.close();
  gw = undefined;
  await rm(home, { recursive: true, force: true });
});

const writeJobs = (jobs: unknown[]) => writeFile(join(home, 'cron.json'), JSON.stringify(jobs));

/** The gateway with its scheduler on the manual clock; runs find the scripted server through ~/.hearth/config.json. */
async function gatewayWithScheduler(clock: ManualClock, dbPath?: string): Promise<TestGateway> {
  const gateway = await startGateway([], {
    config: dbPath ? { db_path: dbPath } : {},
    gateway: { home, scheduler: { clock } },
  });
  await writeFile(
    join(home, 'config.json'),
    JSON.stringify({
      base_url: gateway.llm.baseUrl,
      model: 'scripted-model',
      sandbox: 'none',
      context_window: 32_000,
      max_retries: 0,
    }),
  );
  return gateway;
}

/** Lets the scheduler's loop finish the tick it is in: it then sleeps on a poll-long timer. */
const ticked = (clock: ManualClock) => clock.nextTimer(POLL);

describe('the cron endpoints, with the scheduler inside the gateway', () => {
  it('list, run now, toggle and reload as the seed does; a manual run leaves the slot, which fires at its time', async () => {
    await writeJobs([DAILY_CHECK]);
    const clock = new ManualClock(START);
    gw = await gatewayWithScheduler(clock);
    await ticked(clock);

    const listed = await gw.json<CronList>('/api/cron');
    expect(listed.scheduler).toEqual({ running: true, leader: true, holder_pid: process.pid });
    expect(listed.problems).toEqual([]);
    expect(listed.jobs).toEqual([
      expect.objectContaining({
        id: 'daily-check',
        name: 'Daily status check',
        schedule: 'daily 09:00',
        enabled: true,
        session_id: 'cron-daily-check',
        last_run: null,
        next_run: '2025-06-02 09:00:00 UTC',
        run_count: 0,
        prompt_preview: 'Check system status and summarize any issues.',
        timezone: 'UTC',
        next_at: NINE,
        source: join(home, 'cron.json'),
        workspace: gw.workspace,
      }),
    ]);

    // Run now: blocking, recorded as a manual run, in a session the gateway can open.
    gw.llm.push(reply().text('All systems nominal.'));
    const manual = await gw.json<{ status: string; job: string; run_count: number; run: Json }>(
      '/api/cron/daily-check/run',
      {},
    );
    expect(manual).toMatchObject({
      status: 'ok',
      job: 'daily-check',
      run_count: 1,
      run: { kind: 'manual', status: 'ok', slot_at: null, session_id: expect.any(String) },
    });
    const manualSession = manual.run.session_id as string;
    const history = await gw.json<{ messages: Array<{ role: string; content: string }> }>(
      `/api/sessions/${manualSession}/history`,
    );
    expect(history.messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual([
      'Check system status and summarize any issues.',
      'All systems nominal.',
    ]);
    // The slot is still owed.
    const afterManual = (await gw.json<CronList>('/api/cron')).jobs[0]!;
    expect(afterManual).toMatchObject({
      next_run: '2025-06-02 09:00:00 UTC',
      run_count: 1,
      last_status: 'ok',
      last_run: '2025-06-02 08:59:30 UTC',
      last_session_id: manualSession,
    });

    expect(await gw.json('/api/cron/daily-check/toggle', {})).toEqual({
      status: 'disabled',
      job: 'daily-check',
      enabled: false,
    });
    expect((await gw.json<CronList>('/api/cron')).jobs[0]).toMatchObject({ enabled: false, next_run: null });
    expect(await gw.json('/api/cron/daily-check/toggle', {})).toMatchObject({
      status: 'enabled',
      enabled: true,
    });

    // 09:00 comes: the gateway's scheduler fires the slot, and says so on the activity feed.
    gw.llm.push(reply().text('Checked at nine.'));
    const feed = await gw.http('/api/events');
    const events = readSse(
      feed,
      (e) =>
        e.data.type === 'scheduler' &&
        e.data.event === 'finished' &&
        (e.data.run as Json).kind === 'scheduled',
    );
    clock.advance(60_000);
    const seen = (await events).map((e) => e.data).filter((e) => e.type === 'scheduler');
    expect(seen.map((e) => `${e.event} ${(e.run as Json).kind}`)).toEqual([
      'recorded scheduled',
      'started scheduled',
      'finished scheduled',
    ]);
    const finished = seen.at(-1)!;
    expect(finished).toMatchObject({ job_id: 'daily-check', run: { status: 'ok', slot_at: NINE } });
    expect(finished.session_id).toBe((finished.run as Json).session_id);

    const { runs } = await gw.json<{ job: string; runs: Json[] }>('/api/cron/daily-check/runs');
    expect(runs.map((r) => [r.kind, r.status, r.slot_at, r.caught_up])).toEqual([
      ['scheduled', 'ok', NINE, false],
      ['manual', 'ok', null, false],
    ]);
    const scheduledSession = runs[0]!.session_id as string;
    const { sessions } = await gw.json<{ sessions: Json[] }>('/api/sessions');
    expect(sessions.map((s) => s.session_id)).toContain(scheduledSession);
    expect((await gw.json<CronList>('/api/cron')).jobs[0]).toMatchObject({
      run_count: 2,
      next_run: '2025-06-03 09:00:00 UTC',
    });

    // Reload reads cron.json again; an entry it cannot load is named, the rest load.
    await writeJobs([
      DAILY_CHECK,
      { id: 'weekly', name: 'Weekly', schedule: '0 8 * * 1', prompt: 'Plan the week.' },
      { id: 'broken', name: 'Broken', schedule: 'every fortnight', prompt: 'x' },
    ]);
    const reloaded = await gw.json<{ status: string; jobs_loaded: number; problems: string[] }>(
      '/api/cron/reload',
      {},
    );
    expect(reloaded).toMatchObject({ status: 'reloaded', jobs_loaded: 2 });
    expect(reloaded.problems).toEqual([expect.stringContaining('job 3')]);
    expect((await gw.json<CronList>('/api/cron')).jobs.map((j) => j.id)).toEqual(['daily-check', 'weekly']);

    const unknown = await gw.http('/api/cron/nope/run', { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/problem+json');
    expect(((await unknown.json()) as { detail: string }).detail).toContain('No job "nope"');
    expect(gw.llm.requests).toHaveLength(2);
  });

  it('takes a task submitted over HTTP from the inbox and runs it in a new session', async () => {
    const clock = new ManualClock(START);
    gw = await gatewayWithScheduler(clock);
    await ticked(clock);
    const queued = await gw.json<{ status: string; name: string; dir: string; scheduler_running: boolean }>(
      '/api/inbox',
      { task: 'Summarise the notes.' },
    );
    expect(queued).toMatchObject({ status: 'queued', dir: join(home, 'inbox'), scheduler_running: true });
    const waiting = await gw.json<{ waiting: Json[] }>('/api/inbox');
    expect(waiting.waiting).toEqual([{ name: queued.name, run: null }]);

    gw.llm.push(reply().text('Summary written.'));
    clock.advance(POLL);
    let done: Json | undefined;
    await waitUntil(async () => {
      done = (await gw!.json<{ done: Json[] }>('/api/inbox')).done.find((t) => t.name === queued.name);
      return done !== undefined;
    }, 'the task to be done');
    const run = done!.run as Json;
    expect(run).toMatchObject({ kind: 'inbox', status: 'ok', workspace: gw.workspace });
    const history = await gw.json<{ messages: Array<{ role: string; content: string }> }>(
      `/api/sessions/${run.session_id}/history`,
    );
    expect(history.messages.find((m) => m.role === 'user')!.content).toBe('Summarise the notes.');

    const relative = await gw.http('/api/inbox', {
      method: 'POST',
      body: JSON.stringify({ task: 'x', workspace: 'projects/app' }),
    });
    expect(relative.status).toBe(400);
    expect(((await relative.json()) as { detail: string }).detail).toContain('absolute path');
  });

  it('stands by while another scheduler holds the lease: the slot fires once, then it takes over', async () => {
    await writeJobs([DAILY_CHECK]);
    const clock = new ManualClock(START);
    const dbPath = join(home, 'hearth.db');
    const otherRuns: string[] = [];
    // As a `hearth scheduler` would, on the same database and home.
    const other = SchedulerService.open({
      dbPath,
      home,
      workspace: home,
      clock,
      runner: async (request): Promise<RunOutcome> => {
        otherRuns.push(`${request.run.kind} ${request.run.slotAt}`);
        return { status: 'ok' };
      },
    });
    let closed = false;
    const closeOther = async () => {
      if (!closed) await other.close();
      closed = true;
    };
    closers.push(closeOther);
    await other.scheduler.tick();
    expect(other.scheduler.isLeader).toBe(true);

    gw = await gatewayWithScheduler(clock, dbPath);
    await ticked(clock);
    expect((await gw.json<CronList>('/api/cron')).scheduler).toMatchObject({ running: true, leader: false });

    clock.advance(45_000); // 09:00:15: the slot is due; the other's lease runs to 09:00:30
    await ticked(clock);
    await other.scheduler.tick();
    await other.scheduler.idle();
    clock.advance(POLL);
    await ticked(clock);
    expect(otherRuns).toEqual([`scheduled ${NINE}`]);

    await closeOther();
    clock.advance(POLL);
    await ticked(clock);
    expect((await gw.json<CronList>('/api/cron')).scheduler).toMatchObject({ leader: true });
    const { runs } = await gw.json<{ runs: Json[] }>('/api/cron/daily-check/runs');
    expect(runs.map((r) => [r.kind, r.slot_at, r.status])).toEqual([['scheduled', NINE, 'ok']]);
    expect(gw.llm.requests).toHaveLength(0);
  });

  it('without the scheduler (createServer’s default, hearth serve --no-scheduler) lists and queues, firing nothing', async () => {
    await writeJobs([DAILY_CHECK]);
    gw = await startGateway([], { gateway: { home } });
    const listed = await gw.json<CronList>('/api/cron');
    expect(listed.scheduler).toEqual({ running: false, leader: false, holder_pid: null });
    expect(listed.jobs.map((j) => j.id)).toEqual(['daily-check']);
    const queued = await gw.json<{ scheduler_running: boolean; name: string }>('/api/inbox', {
      task: 'later',
    });
    expect(queued.scheduler_running).toBe(false);
    expect((await gw.json<{ waiting: Json[] }>('/api/inbox')).waiting).toEqual([
      { name: queued.name, run: null },
    ]);
  });
});
