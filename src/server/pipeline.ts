import type { JournalEntry } from '../pipeline/journal.js';
import { PipelineJournal } from '../pipeline/journal.js';
import { PipelineControl } from '../pipeline/steering.js';
import type { Db } from '../store/database.js';
import { type Clock, systemClock, type TimerHandle } from '../util/clock.js';
import type { WireEvent } from './wire.js';

/** How often the journal is read for events other processes recorded. */
const POLL_MS = 1000;

export interface GatewayPipelineOptions {
  db: Db;
  clock?: Clock;
  /** Where pipeline events go: the activity feed (`/ws/activity`, `GET /api/events`). */
  announce: (event: WireEvent) => void;
}

/**
 * The pipelines of the gateway's database. A pipeline runs in its own process (`hearth pipeline
 * run`), so its events reach the gateway through the journal in the shared database: read every
 * second once started, each new entry announced on the activity feed as `{type: "pipeline",
 * id, workspace, at, event}`. What the routes change (pause, resume) is recorded there too, and
 * so reaches watchers the same way.
 */
export class GatewayPipeline {
  readonly journal: PipelineJournal;
  private readonly clock: Clock;
  private last = 0;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: GatewayPipelineOptions) {
    this.clock = options.clock ?? systemClock;
    this.journal = new PipelineJournal(options.db, this.clock);
  }

  control(workspace: string): PipelineControl {
    return new PipelineControl(this.options.db, workspace, this.clock);
  }

  /** Announces every event recorded from now on. */
  start(): void {
    if (this.timer) return;
    this.last = this.journal.lastId();
    this.schedule();
  }

  stop(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Announces what was recorded since the last look. */
  poll(): void {
    for (const entry of this.journal.since(undefined, this.last)) {
      this.last = entry.id;
      this.options.announce(pipelineWire(entry));
    }
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      try {
        this.poll();
      } finally {
        if (this.timer) this.schedule();
      }
    }, POLL_MS);
    this.timer.unref();
  }
}

/** A journal entry as clients receive it. */
export function pipelineWire(entry: JournalEntry): WireEvent {
  return { type: 'pipeline', id: entry.id, workspace: entry.workspace, at: entry.at, event: entry.event };
}
