import type { AgentEvent, SessionEvent } from '../agent/events.js';
import type { SessionRow } from '../store/rows.js';
import { terminalJson } from './sanitize.js';

/** Events a reader may act on at once (the session's id, a question, a run's end): written at once, with everything before them. */
const AT_ONCE = new Set<AgentEvent['type']>(['session', 'done', 'warning', 'approval_request']);

/**
 * `--json` output: one event per line. The session is named first, as soon as it is known (a
 * resumed one before anything can refuse it, a new one as it is created), so a script can resume it
 * whatever comes next: a warning, a refusal, a server error. A run's own `session` event repeats
 * that line only when something in it changed (another model for this run).
 *
 * The lines of one turn of the event loop go out in one write: a write to a pipe is a system call
 * that wakes the reader, and a step made four of them. A run's end, an error or a warning is
 * written at once, and whatever waits is written before the process exits.
 */
export class JsonLines {
  private named: string | undefined;
  private pending = '';
  private scheduled = false;

  constructor(private readonly out: NodeJS.WritableStream) {
    process.once('exit', () => this.flush());
  }

  write(event: AgentEvent): void {
    const line = terminalJson(event);
    if (event.type === 'session') {
      if (line === this.named) return;
      this.named = line;
    }
    this.pending += `${line}\n`;
    if (AT_ONCE.has(event.type)) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Names a stored session before it is opened: with the model it last ran with. */
  stored(row: SessionRow): void {
    const event: SessionEvent = { type: 'session', id: row.id, workspace: row.workspace, model: row.model };
    this.write(event);
  }

  /** Writes the lines waiting, if any. */
  flush(): void {
    this.scheduled = false;
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.out.write(text);
  }
}
