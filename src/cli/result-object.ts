import type { AgentEvent, DoneEvent } from '../agent/events.js';
import { terminalJson } from './sanitize.js';

/**
 * `--output-style json` (LAO's json style): a one-shot run shows its progress on stderr and ends
 * with one JSON object on stdout, for a script to read. (`--json` is the other shape: every event.)
 */
export class ResultObject {
  private prompt = 0;
  private completion = 0;
  private toolCalls = 0;
  private readonly warnings: string[] = [];

  record(event: AgentEvent): void {
    if (event.type === 'usage') {
      this.prompt += event.prompt;
      this.completion += event.completion;
    } else if (event.type === 'tool_call') this.toolCalls++;
    else if (event.type === 'warning') this.warnings.push(event.message);
  }

  /** The object, as one line. */
  line(session: string, done: DoneEvent | undefined, exitCode: number): string {
    return terminalJson({
      type: 'result',
      session,
      status: done?.reason ?? 'error',
      answer: done?.text ?? '',
      turns: done?.turns ?? 0,
      tool_calls: this.toolCalls,
      usage: { prompt_tokens: this.prompt, completion_tokens: this.completion },
      ...(this.warnings.length > 0 ? { warnings: this.warnings } : {}),
      exit_code: exitCode,
    });
  }
}
