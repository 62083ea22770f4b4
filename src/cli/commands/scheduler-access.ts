import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { SchedulerService, SchedulerServiceOptions } from '../../scheduler/service.js';
import type { RunRow } from '../../store/rows.js';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';

/** Opens the scheduler service for the flags' workspace and database, runs `work`, closes it. */
export async function withScheduler<T>(
  cmd: Command,
  work: (service: SchedulerService) => Promise<T>,
  extra: Partial<SchedulerServiceOptions> = {},
): Promise<T> {
  // Loaded on use, like the scheduler itself (croner, the agent runner): `--help` stays cheap.
  const [{ defaultDbPath, hearthHome }, { checkWorkspace }, { openDatabase }, { loadConfigFromFlags }] =
    await Promise.all([
      import('../../config/load.js'),
      import('../../config/workspace.js'),
      import('../../store/sqlite/database.js'),
      import('../options.js'),
    ]);
  const flags = cmd.optsWithGlobals<GlobalFlags>();
  const { config } = await loadConfigFromFlags(flags);
  const dbPath = defaultDbPath(config);
  const db = openDatabase(dbPath);
  // Sessions where they are kept (PostgreSQL with `storage`): `hearth wake` and wake-ups find them there.
  const { openStorage } = await import('../../store/storage.js');
  const storage = await openStorage(config, { db }).catch((err: unknown) => {
    db.close();
    throw err;
  });
  try {
    const workspace = await checkWorkspace(resolve(flags.workspace));
    const [{ SchedulerService }, { homeScope }] = await Promise.all([
      import('../../scheduler/service.js'),
      import('../../store/scheduler-storage.js'),
    ]);
    const home = hearthHome();
    // The scheduler's runs, jobs and wake-ups where the sessions are: shared by every machine on PostgreSQL.
    const records = await storage.scheduler({ scope: homeScope(home) });
    const service = new SchedulerService({
      db,
      dbPath,
      sessions: storage.sessions,
      records,
      home,
      workspace,
      storage: config.storage,
      ...(storage.kind === 'postgres' ? { shared: storage } : {}),
      runOn: config.scheduler.run_on,
      ...extra,
    });
    try {
      return await work(service);
    } finally {
      // Closes the shared queue a command opened (a manual run on it, results collected).
      await service.stop();
    }
  } finally {
    await storage.close();
    db.close();
  }
}

/** `2025-06-03 09:00`, local time, as people read a schedule. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** One run as a line: when, what, how it ended, where (the session), what it cost, why. */
export function describeRun(run: RunRow): string {
  const when = localTime(run.slotAt ?? run.createdAt);
  const what = run.kind === 'scheduled' ? (run.caughtUp ? 'caught up' : 'on time') : run.kind;
  const tokens = run.promptTokens + run.completionTokens;
  return [
    when,
    what.padEnd(9),
    run.status.padEnd(7),
    run.sessionId ? `session ${run.sessionId}` : '',
    run.host
      ? `on ${run.host} (worker ${run.worker})`
      : run.queueKey && run.status === 'running'
        ? 'on the queue'
        : '',
    tokens ? `${tokens} tokens` : '',
    run.reason ? visible(run.reason) : '',
  ]
    .filter(Boolean)
    .join('  ');
}
