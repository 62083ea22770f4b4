import type { AgentEvent, SessionEvent } from '../agent/events.js';
import type { SessionRow } from '../store/rows.js';
import { terminalJson } from './sanitize.js';

/**
 * `--json` output: one event per line. The session is named first, as soon as it is known (a
 * resumed one before anything can refuse it, a new one as it is created), so a script can resume it
 * whatever comes next: a warning, a refusal, a server error. A run's own `session` event repeats
 * that line only when something in it changed (another model for this run).
 */
export class JsonLines {
  private named: string | undefined;

  constructor(private readonly out: NodeJS.WritableStream) {}

  write(event: AgentEvent): void {
    const line = terminalJson(event);
    if (event.type === 'session') {
      if (line === this.named) return;
      this.named = line;
    }
    this.out.write(`${line}\n`);
  }

  /** Names a stored session before it is opened: with the model it last ran with. */
  stored(row: SessionRow): void {
    const event: SessionEvent = { type: 'session', id: row.id, workspace: row.workspace, model: row.model };
    this.write(event);
  }
}
