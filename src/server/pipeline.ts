import type { WireEvent } from '../cluster/wire.js';
import type { Config } from '../config/schema.js';
import type { JournalEntry } from '../pipeline/journal.js';
import { PipelineControl } from '../pipeline/steering.js';
import { type PipelineStorage, pipelineStorage } from '../pipeline/storage.js';
import type { Storage } from '../store/storage.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';

/** How often the journal is read for events other processes recorded. */
const POLL_MS = 1000;

export interface GatewayPipelineOptions {
  /** The gateway's Storage, opened on first use: the pipelines are kept in it. */
  storage: () => Promise<Storage>;
  /** `pipeline.lease`: how long a claim lasts. */
  config?: Pick<Config, 'storage' | 'pipeline'>;
  clock?: Clock;
  /** Where pipeline events go: the activity feed (`/ws/activity`, `GET /api/events`). */
  announce: (event: WireEvent) => void;
  /** A problem reading the journal (the shared database out of reach), said and retried. */
  onProblem?: (message: string) => void;
}

/**
 * The pipelines of the gateway's store (the session database, or the shared PostgreSQL one). A
 * pipeline runs in its own process (`hearth pipeline run`, on this machine or another), so its
 * events reach the gateway through the journal: read every second once started, each new entry
 * announced on the activity feed as `{type: "pipeline", id, workspace, at, event}`. What the
 * routes change (pause, resume) is recorded there too, and so reaches watchers the same way.
 */
export class GatewayPipeline {
  private readonly clock: Clock;
  private last = 0;
  private timer: TimerHandle | undefined;
  private started = false;
  private storage: Promise<PipelineStorage> | undefined;

  constructor(private readonly options: GatewayPipelineOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The store, opened on first use. */
  private open(): Promise<PipelineStorage> {
    this.storage ??= this.options
      .storage()
      .then((storage) => pipelineStorage(storage, this.options.config ?? {}, { clock: this.clock }))
      .catch((err: Error) => {
        this.storage = undefined;
        throw err;
      });
    const opening = this.storage;
    return opening;
  }

  async control(workspace: string): Promise<PipelineControl> {
    const { plans, journal } = await this.open();
    return new PipelineControl(plans, journal, workspace);
  }

  /** Announces every event recorded from now on. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    try {
      this.last = await (await this.open()).journal.lastId();
    } catch (err) {
      this.options.onProblem?.(`The pipeline journal cannot be read: ${(err as Error).message}`);
    }
    if (this.started) this.schedule();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const storage = this.storage;
    this.storage = undefined;
    await (await storage?.catch(() => undefined))?.close();
  }

  /** Announces what was recorded since the last look. */
  async poll(): Promise<void> {
    const { journal } = await this.open();
    for (const entry of await journal.since(undefined, this.last)) {
      this.last = entry.id;
      this.options.announce(pipelineWire(entry));
    }
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      this.poll()
        .catch((err: Error) =>
          this.options.onProblem?.(`The pipeline journal cannot be read: ${err.message}`),
        )
        .finally(() => {
          if (this.started) this.schedule();
        });
    }, POLL_MS);
    this.timer.unref();
  }
}

/** A journal entry as clients receive it. */
function pipelineWire(entry: JournalEntry): WireEvent {
  return { type: 'pipeline', id: entry.id, workspace: entry.workspace, at: entry.at, event: entry.event };
}
