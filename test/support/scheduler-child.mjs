/**
 * A scheduler process on simulated time, for test/scheduler/crash-safety.test.ts. Plain JavaScript
 * over the built dist/ (as the CLI tests use the built CLI): the crash test starts it 51 times, and
 * a start without a TypeScript loader costs a fraction of one with it.
 *
 * Its runner only appends "job slot pid" to a log, before the run is recorded as finished; so the
 * log shows every execution, and a duplicate would show twice.
 *
 *   node scheduler-child.mjs CONFIG_JSON
 *
 * mode "month": runs from the time saved in `stateFile` (plus `downtime`: the machine was off) to
 * `end`, tick after tick, saving the time as it goes; prints "ready" first and "done" at the end.
 * mode "ipc": ticks when the parent sends {now}, and answers {leader}.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { defineJob } from '../../dist/scheduler/job-definitions.js';
import { Scheduler } from '../../dist/scheduler/scheduler.js';
import { openDatabase } from '../../dist/store/sqlite/database.js';
import { SqliteSchedulerStorage } from '../../dist/store/sqlite/scheduler.js';
import { SqliteSessionStorage } from '../../dist/store/sqlite/sessions.js';

const config = JSON.parse(process.argv[2]);
const db = openDatabase(config.db);

/** Time that moves only when told; timers (the run-lease heartbeat) fire on the way. */
class SimClock {
  timers = new Set();
  constructor(now) {
    this.time = now;
  }
  now() {
    return this.time;
  }
  setTimeout(callback, ms) {
    const timer = { at: this.time + ms, callback, unref: () => timer };
    this.timers.add(timer);
    return timer;
  }
  clearTimeout(timer) {
    this.timers.delete(timer);
  }
  moveTo(at) {
    for (;;) {
      const due = [...this.timers].filter((t) => t.at <= at).sort((x, y) => x.at - y.at)[0];
      if (!due) break;
      this.timers.delete(due);
      this.time = Math.max(this.time, due.at);
      due.callback();
    }
    this.time = Math.max(this.time, at);
  }
}

function savedTime() {
  try {
    return Number(readFileSync(config.stateFile, 'utf8'));
  } catch {
    return 0;
  }
}

const clock = new SimClock(
  Math.max(config.start, config.stateFile ? savedTime() + (config.downtime ?? 0) : 0),
);
const jobs = config.jobs.map((job) => defineJob(job, 'test', '/tmp'));
const scheduler = new Scheduler({
  store: new SqliteSchedulerStorage(db),
  sessions: new SqliteSessionStorage(db, config.db),
  loadJobs: async () => ({ jobs, problems: [] }),
  runner: async ({ run }) => {
    appendFileSync(config.log, `${run.jobId} ${run.slotAt} ${process.pid}\n`);
    // A run takes a moment, so a kill can land while it goes.
    await new Promise((resolve) => setImmediate(resolve));
    return { status: 'ok', promptTokens: 1, completionTokens: 1 };
  },
  workspace: '/tmp',
  clock,
  leaseTtl: config.leaseTtl,
  poll: config.poll,
});

if (config.mode === 'month') {
  process.stdout.write('ready\n');
  while (clock.now() <= config.end) {
    await scheduler.tick();
    await scheduler.idle();
    writeFileSync(config.stateFile, String(clock.now()));
    const due = scheduler.isLeader
      ? ((await scheduler.nextDue()) ?? Number.POSITIVE_INFINITY)
      : Number.POSITIVE_INFINITY;
    clock.moveTo(Math.max(clock.now() + 1, Math.min(due, clock.now() + config.poll)));
  }
  process.stdout.write('done\n');
  db.close();
} else {
  process.on('message', async (message) => {
    clock.moveTo(message.now);
    await scheduler.tick();
    await scheduler.idle();
    process.send({ leader: scheduler.isLeader });
  });
  process.send({ ready: true });
}
