/**
 * The gateway turns a `hearth worker` runs (`gateway.turns: workers` on some `hearth serve`): a
 * session hub of the worker's own over the shared database, built at the first turn, in which each
 * turn runs as a gateway would run it (src/server/queued-turn.ts).
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { trace } from '@opentelemetry/api';
import { TurnQueue } from '../../cluster/turn-queue.js';
import type { QueuedTurn } from '../../cluster/work-queue.js';
import type { ClaimedTask, TaskOutcome } from '../../cluster/worker.js';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { describeIgnored } from '../../config/security.js';
import { SessionHub } from '../../server/hub.js';
import { runQueuedTurn } from '../../server/queued-turn.js';
import { openDatabase } from '../../store/sqlite/database.js';
import type { PostgresStorage } from '../../store/storage.js';

export interface TurnWorkerOptions {
  config: Config;
  /** The worker's Storage (the shared database), whose lease holder names the worker; its owner closes it. */
  storage: PostgresStorage;
  /** This machine's database (memory, usage); sessions are in the shared one. */
  dbPath: string;
  /** The folder the worker was started in: sessions there run with `config`. */
  workspace: string;
  /** The worker's lease: its session leases last as long, and a dead one's are awaited twice that. */
  leaseSeconds: number;
  say: (line: string) => void;
}

export interface TurnWorker {
  run(task: ClaimedTask & { turn: QueuedTurn }, signal: AbortSignal): Promise<TaskOutcome>;
  close(): Promise<void>;
}

/** Finished turns are kept this long (their reply is in the session), and looked for this often. */
const KEEP_TURNS_SECONDS = 24 * 3600;
const PRUNE_EVERY_MS = 3600_000;

export function turnWorker(options: TurnWorkerOptions): TurnWorker {
  const who = `hearth worker on ${hostname()} (pid ${process.pid})`;
  let opened: Promise<{ hub: SessionHub; turns: TurnQueue }> | undefined;
  let prunedAt = Number.NEGATIVE_INFINITY;
  const open = async () => {
    const { config, dbPath, storage } = options;
    const onProblem = (message: string) => options.say(`problem: ${message}`);
    const events = await storage.events({ writer: who, onProblem });
    const db = openDatabase(dbPath);
    const hub = new SessionHub({
      db,
      events,
      sessions: storage.sessions,
      storage,
      config,
      workspace: resolve(options.workspace),
      configFor: async (folder) => {
        const loaded = await loadConfig({
          workspace: folder,
          flags: [{ key: 'db_path', value: dbPath, name: 'hearth worker' }],
        });
        return { config: loaded.config, notes: describeIgnored(loaded.ignored) };
      },
      now: Date.now,
      tracer: trace.getTracer('hearth'),
      approvalTimeoutMs: config.gateway.approval_timeout * 1000,
    });
    return { hub, turns: new TurnQueue(storage.pool, storage.url, onProblem) };
  };
  return {
    async run(task, signal) {
      opened ??= open();
      opened.catch(() => {
        opened = undefined; // a database that was away may be back for the next turn
      });
      const { hub, turns } = await opened;
      if (Date.now() - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = Date.now();
        turns.prune(KEEP_TURNS_SECONDS).catch((err: unknown) => {
          options.say(`problem: could not forget old turns: ${(err as Error).message}`);
        });
      }
      return runQueuedTurn(hub, turns, task, {
        worker: who,
        leaseWaitMs: options.leaseSeconds * 2000,
        signal,
        onProblem: (message) => options.say(`problem: ${message}`),
      });
    },
    async close() {
      const held = await opened?.catch(() => undefined);
      await held?.turns.close();
      await held?.hub.close();
    },
  };
}
