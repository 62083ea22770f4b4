/**
 * Exactly-once under crashes and competition, with real processes on one database file: a
 * scheduler killed (SIGKILL) at 50 random moments over a simulated month of 20 jobs, and two
 * schedulers ticking side by side, one paused and one killed along the way. After each, every slot
 * of every job has exactly one record, and the runs' own log shows no slot executed twice.
 */

import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { defineJob, type JobInput } from '../../src/scheduler/job-definitions.js';
import { nextSlot, slotsBetween } from '../../src/scheduler/schedule.js';
import type { RunRow } from '../../src/store/rows.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { SqliteSchedulerStorage } from '../../src/store/sqlite/scheduler.js';
import { seededRandom } from '../support/seeded-random.js';
import { withDeadline } from '../support/wait.js';

// Fifty-one process starts on a loaded machine: the timeout only catches a hang.
vi.setConfig({ testTimeout: 600_000 });

const CHILD = join(import.meta.dirname, '../support/scheduler-child.mjs');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// Across both daylight-saving ends of autumn 2025 (Europe 26 October, US 2 November).
const START = Date.parse('2025-10-15T00:00:00Z');
const MONTH = 30 * DAY;

let dir: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-crash-'));
});
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

// Twenty schedules of every form, a few runs a day each, so that a simulated month is a few
// thousand ticks.
const SCHEDULES = [
  ['every 4h'],
  ['every 5h'],
  ['every 7h'],
  ['every 1d'],
  ['hourly :15', 'UTC'],
  ['daily 09:00', 'Europe/Berlin'],
  ['daily 01:30', 'America/New_York'],
  ['daily 02:30', 'Europe/London'],
  ['*/40 8-10 * * 1-5', 'UTC'],
  ['0 */3 * * *', 'Asia/Tokyo'],
  ['@daily', 'UTC'],
  ['@weekly', 'Europe/Berlin'],
  ['5 4 * * sun', 'America/New_York'],
  ['every 3h'],
  ['0 12 1,15 * *', 'UTC'],
  ['every 9h'],
  ['30 6,18 * * *', 'Europe/Paris'],
  ['daily 23:59', 'Pacific/Auckland'],
  ['every 6h'],
  ['@hourly', 'UTC'],
] as const;

/** What test/support/scheduler-child.mjs reads from its argument. */
interface ChildConfig {
  mode: 'month' | 'ipc';
  db: string;
  log: string;
  jobs: JobInput[];
  start: number;
  end?: number;
  stateFile?: string;
  downtime?: number;
  leaseTtl: number;
  poll: number;
}

function twentyJobs(): JobInput[] {
  const policies = ['skip', 'once', 'all'] as const;
  return SCHEDULES.map(([schedule, timezone], i) => ({
    id: `job-${i}`,
    name: `job ${i}`,
    schedule,
    timezone,
    prompt: `task ${i}`,
    catch_up: policies[i % 3],
    overlap: i % 2 ? 'queue' : 'skip',
  }));
}

interface Execution {
  job: string;
  slot: number;
  pid: number;
}

async function executions(log: string): Promise<Execution[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [job, slot, pid] = line.split(' ');
      return { job: job!, slot: Number(slot), pid: Number(pid) };
    });
}

/**
 * Every slot of every job from when it was first seen up to its cursor has exactly one record,
 * nothing is left queued or running, and no slot was executed twice.
 */
async function checkExactlyOnce(
  dbPath: string,
  jobs: JobInput[],
  ran: Execution[],
  until: number,
): Promise<RunRow[]> {
  const db = openDatabase(dbPath);
  try {
    const store = new SqliteSchedulerStorage(db);
    const all = await store.runs({ limit: 1_000_000 });
    expect(all.filter((r) => r.status === 'queued' || r.status === 'running')).toEqual([]);
    for (const failed of all.filter((r) => r.status === 'failed'))
      expect(failed.reason).toMatch(/^interrupted/);
    for (const input of jobs) {
      const job = defineJob(input, 'test', '/tmp');
      const state = (await store.jobState(job.id))!;
      // The cursor is the latest slot recorded: none is left between it and the end.
      expect(
        nextSlot(job.schedule, state.cursorAt, state.anchorAt)!,
        `${job.id}: recorded up to the end`,
      ).toBeGreaterThan(until);
      const expected = slotsBetween(job.schedule, state.anchorAt, state.cursorAt, state.anchorAt, 100_000);
      const recorded = all.filter((r) => r.jobId === job.id).map((r) => r.slotAt!);
      expect(recorded.length, `${job.id}: one record per slot`).toBe(new Set(recorded).size);
      expect(
        recorded.sort((a, b) => a - b),
        `${job.id}: every slot recorded`,
      ).toEqual(expected);
    }
    const keys = ran.map((e) => `${e.job} ${e.slot}`);
    expect(keys.length, 'no slot executed twice').toBe(new Set(keys).size);
    // Whatever executed has its record as ok, or as interrupted when the kill came mid-run.
    const bySlot = new Map(all.map((r) => [`${r.jobId} ${r.slotAt}`, r]));
    for (const key of keys) expect(['ok', 'failed']).toContain(bySlot.get(key)?.status);
    for (const run of all.filter((r) => r.status === 'ok'))
      expect(keys).toContain(`${run.jobId} ${run.slotAt}`);
    return all;
  } finally {
    db.close();
  }
}

function startMonthChild(config: ChildConfig) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  const exited = new Promise<{ done: boolean }>((resolve) =>
    child.on('exit', () => resolve({ done: out.includes('done\n') })),
  );
  return { child, ready, exited };
}

it('a scheduler killed at 50 random moments over a month of 20 jobs records every slot once and runs none twice', async () => {
  const seed = Number(process.env.HEARTH_CRASH_SEED ?? Date.now() % 1_000_000);
  console.info(
    `crash test seed: ${seed} (HEARTH_CRASH_SEED=${seed} repeats the downtimes and kill delays; where a kill lands also depends on timing)`,
  );
  const next = seededRandom(seed);
  const jobs = twentyJobs();
  const paths = { db: join(dir, 'hearth.db'), log: join(dir, 'runs.log'), stateFile: join(dir, 'now') };
  const base = {
    mode: 'month' as const,
    ...paths,
    jobs,
    start: START,
    end: START + MONTH,
    leaseTtl: 2 * HOUR,
    poll: HOUR,
  };

  let kills = 0;
  let finished = false;
  // Simulated time one real millisecond covers, learned as the lives go: the kills then spread over the month.
  let rate = 0;
  while (!finished) {
    const before = Number(await readFile(paths.stateFile, 'utf8').catch(() => String(START))) || START;
    const downtime = Math.floor(next() * 3 * HOUR);
    const run = startMonthChild({ ...base, downtime });
    await withDeadline(run.ready, 'the scheduler child to start', 60_000);
    const lived = Date.now();
    if (kills < 50) {
      const aim = MONTH / 60; // leave part of the month for the last, unkilled life
      const delay = rate > 0 ? next() * ((2 * aim) / rate) : next() * 200;
      const timer = setTimeout(() => run.child.kill('SIGKILL'), delay);
      const { done } = await run.exited;
      clearTimeout(timer);
      if (run.child.signalCode === 'SIGKILL') kills++;
      finished = done;
    } else {
      finished = (await withDeadline(run.exited, 'the last life to finish the month', 180_000)).done;
    }
    const after = Number(await readFile(paths.stateFile, 'utf8').catch(() => String(before)));
    const elapsed = Date.now() - lived;
    if (after > before && elapsed > 0)
      rate = rate === 0 ? (after - before) / elapsed : (rate + (after - before) / elapsed) / 2;
  }
  expect(kills).toBeGreaterThanOrEqual(1);
  console.info(`${kills} kills before the month was done`);

  // One more tick well after the end: runs a kill cut short are past their lease and get recorded.
  const settle = startMonthChild({
    ...base,
    downtime: 0,
    start: START + MONTH + DAY,
    end: START + MONTH + DAY,
  });
  await withDeadline(settle.exited, 'the settling tick', 60_000);

  const ran = await executions(paths.log);
  const runs = await checkExactlyOnce(paths.db, jobs, ran, START + MONTH);
  expect(ran.length).toBeGreaterThan(500);
  expect(runs.some((r) => r.caughtUp)).toBe(true);
});

function startIpcChild(config: ChildConfig) {
  const child = fork(CHILD, [JSON.stringify(config)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const ready = new Promise<void>((resolve) => child.once('message', () => resolve()));
  return { child, ready, tick: (now: number) => tickChild(child, now) };
}

function tickChild(child: ChildProcess, now: number): Promise<boolean> {
  const answered = new Promise<boolean>((resolve) =>
    child.once('message', (m: { leader: boolean }) => resolve(m.leader)),
  );
  child.send({ now });
  return withDeadline(answered, `child ${child.pid} to tick`, 60_000);
}

it('two scheduler processes on one database never run the same slot, through a pause and a kill', async () => {
  const jobs = twentyJobs().slice(0, 6);
  const config: ChildConfig = {
    mode: 'ipc',
    db: join(dir, 'hearth.db'),
    log: join(dir, 'runs.log'),
    jobs,
    start: START,
    leaseTtl: 20 * MINUTE,
    poll: 10 * MINUTE,
  };
  const a = startIpcChild(config);
  const b = startIpcChild(config);
  await withDeadline(Promise.all([a.ready, b.ready]), 'both children to start', 60_000);

  let now = START;
  const both = async () => {
    now += 5 * MINUTE;
    return Promise.all([a.tick(now), b.tick(now)]);
  };
  // Both tick at the same simulated moments, racing for the database.
  const leaders: boolean[][] = [];
  for (let i = 0; i < 288; i++) leaders.push(await both());
  expect(leaders.every(([x, y]) => x !== y)).toBe(true);
  const [first, second] = leaders.at(-1)![0] ? [a, b] : [b, a];

  // The leader pauses (SIGSTOP) past its lease: the other takes over.
  first.child.kill('SIGSTOP');
  for (let i = 0; i < 288; i++) {
    now += 5 * MINUTE;
    await second.tick(now);
  }
  first.child.kill('SIGCONT');
  // Back, it finds the lease taken and stands by, while both tick again.
  for (let i = 0; i < 288; i++) expect(await both()).toEqual(first === a ? [false, true] : [true, false]);

  // The new leader is killed: the first takes over again.
  second.child.kill('SIGKILL');
  for (let i = 0; i < 288; i++) {
    now += 5 * MINUTE;
    await first.tick(now);
  }
  first.child.kill('SIGKILL');

  const ran = await executions(config.log);
  const pids = new Set(ran.map((e) => e.pid));
  expect(pids).toEqual(new Set([a.child.pid, b.child.pid]));
  await checkExactlyOnce(config.db, jobs, ran, now);
});
