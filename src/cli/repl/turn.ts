import type { AgentEvent, DoneEvent, SubagentEvent } from '../../agent/events.js';
import type { ApprovalAnswer } from '../../permissions/gate.js';
import type { Key, Keyboard } from './keyboard.js';
import type { ReplRenderer } from './render-turn.js';
import type { Spinner } from './spinner.js';

/** Events after which the REPL waits on the model or a tool again, with what to say meanwhile. */
const WAITING = 'the model server is reading the prompt';

/** A sub-agent's events that show a line or change what it is doing. */
const SHOWN_STEPS = new Set([
  'turn_start',
  'tool_call',
  'tool_result',
  'warning',
  'retry',
  'approval_request',
]);

/**
 * Runs one piece of work at a time (a task, a compaction) with a fresh AbortController: Ctrl+C
 * aborts it and the REPL carries on; a second Ctrl+C before it has wound down exits at once.
 * While it runs, the spinner says what is being waited for.
 */
export class TurnRunner {
  private controller: AbortController | undefined;
  private interrupts = 0;
  /** Where a message typed during a run goes; unset while other work (a compaction) runs. */
  private steer: ((text: string) => void) | undefined;
  private draft = '';

  constructor(
    private readonly keyboard: Keyboard,
    private readonly renderer: ReplRenderer,
    private readonly spinner: Spinner,
    /** Leaves the process now: the user pressed Ctrl+C twice. */
    private readonly exitNow: (code: number) => void,
  ) {}

  get busy(): boolean {
    return this.controller !== undefined;
  }

  /** Ctrl+C while work runs: the first aborts it, the second exits. */
  interrupt(): void {
    if (!this.controller) return;
    this.interrupts++;
    if (this.interrupts > 1) {
      this.exitNow(130);
      return;
    }
    this.spinner.stop();
    this.controller.abort();
  }

  /** Streams a run of the agent to the screen; resolves with how it ended. */
  async run(
    events: (signal: AbortSignal) => AsyncGenerator<AgentEvent>,
    onEvent: (event: AgentEvent) => void,
    steer?: (text: string) => void,
  ): Promise<DoneEvent | undefined> {
    this.renderer.begin();
    let done: DoneEvent | undefined;
    this.steer = steer;
    try {
      await this.guard(WAITING, async (signal) => {
        for await (const event of events(signal)) {
          this.show(event);
          onEvent(event);
          if (event.type === 'done') done = event;
        }
      });
    } finally {
      this.steer = undefined;
      this.draft = '';
    }
    return done;
  }

  /** Other slow work (compaction): the same spinner and Ctrl+C. Rejects as the work does. */
  async work<T>(label: string, job: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let result: T | undefined;
    await this.guard(label, async (signal) => {
      result = await job(signal);
    });
    return result as T;
  }

  /**
   * Before an approval question. A sub-agent's may come before its approval_request event is
   * shown (it runs beside the parent's stream), so the spinner stops and the screen is handed over here.
   */
  asking(): void {
    this.spinner.stop();
    this.renderer.makeRoom();
  }

  /** After an approval question: the approved call runs now, so say so. */
  answered(answer: ApprovalAnswer): void {
    if (answer.decision === 'deny' || !this.controller || this.controller.signal.aborted) return;
    this.renderer.settle();
    this.spinner.start(this.runningLabel());
  }

  /** What the spinner says while a call runs: the sub-agent's step when one is under way. */
  private runningLabel(): string {
    return this.renderer.subagentStatus ?? `running ${this.renderer.lastCall}`;
  }

  private async guard(label: string, body: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    this.interrupts = 0;
    const release = this.keyboard.capture((text, key) => this.onKey(text, key));
    this.renderer.settle();
    this.spinner.start(label);
    try {
      await body(controller.signal);
    } finally {
      this.spinner.stop();
      release();
      this.controller = undefined;
      this.renderer.settle();
    }
  }

  /**
   * Typing during a run edits a draft shown on the spinner's line (echoing keys in place would
   * garble the streamed answer); Enter queues it for the running turn, which takes it after the
   * tool call in progress.
   */
  private onKey(text: string | undefined, key: Key): void {
    if (key.ctrl && key.name === 'c') {
      this.interrupt();
      return;
    }
    if (!this.steer) return;
    if (key.name === 'return' || key.name === 'enter') {
      const message = this.draft.trim();
      this.draft = '';
      this.spinner.setDraft('');
      if (message === '') return;
      this.steer(message);
      this.spinner.clear();
      this.renderer.line(
        this.renderer.styles.err.dim(`› ${message}  (queued: added after the current step)`),
      );
      return;
    }
    if (key.name === 'backspace') {
      this.draft = [...new Intl.Segmenter().segment(this.draft)]
        .slice(0, -1)
        .map((s) => s.segment)
        .join('');
    } else if (text !== undefined && !key.ctrl && !key.meta && !/[\x00-\x1f\x7f]/.test(text)) {
      this.draft += text;
    } else {
      return;
    }
    this.spinner.setDraft(this.draft);
  }

  private show(event: AgentEvent): void {
    switch (event.type) {
      case 'session':
      case 'usage':
        break;
      case 'turn_start':
        this.renderer.settle();
        this.spinner.start(WAITING);
        break;
      case 'tool_call':
        this.spinner.stop();
        this.renderer.render(event);
        this.spinner.start(`running ${this.renderer.lastCall}`);
        return;
      case 'retry':
        this.spinner.stop();
        this.renderer.render(event);
        this.spinner.start(WAITING);
        return;
      case 'tool_progress':
        this.spinner.setDetail(event.output);
        return;
      case 'subagent_event':
        if (event.event.type === 'tool_progress') {
          this.spinner.setDetail(event.event.output);
          return;
        }
        // A child's text and reasoning stay in its session; only its steps show, and move the spinner.
        if (!SHOWN_STEPS.has(event.event.type)) return;
        // The question itself stops the spinner (asking), whenever this event arrives.
        if (event.event.type === 'approval_request') this.renderer.render(event);
        else this.showSubagent(event);
        return;
      case 'subagent_start':
      case 'subagent_end':
        this.showSubagent(event);
        return;
      default:
        this.spinner.stop();
    }
    this.renderer.render(event);
  }

  private showSubagent(event: SubagentEvent): void {
    this.spinner.stop();
    this.renderer.render(event);
    this.spinner.start(this.runningLabel());
  }
}
