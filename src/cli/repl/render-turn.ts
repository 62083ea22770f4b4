import type { AgentEvent } from '../../agent/events.js';
import { callRow, colorDiff, firstLine, isDiff, type Style } from '../render.js';
import { visibleDeep } from '../sanitize.js';
import { columnsOf, RowCounter, stripAnsi } from '../text-width.js';
import { MarkdownStream } from './markdown.js';
import { SubagentBlocks } from './subagent-blocks.js';

export interface ReplStyles {
  /** For the answer on stdout. */
  out: Style;
  outColor: boolean;
  /** For everything else, on stderr. */
  err: Style;
}

/** Long diffs are cut here; the model got the full result, and the file is on disk. */
const DIFF_LINES = 40;

interface Thinking {
  text: string;
  started: number;
  rows: RowCounter;
}

/**
 * Shows a turn as it happens: the answer as light Markdown on stdout; on stderr the reasoning
 * (dimmed, folded to one line once the answer starts), one line per tool call with its status
 * and time, the diff of an edit, warnings, and how the turn ended.
 */
export class ReplRenderer {
  private readonly markdown: MarkdownStream;
  private errAtLineStart = true;
  private thinking: Thinking | undefined;
  private readonly calls = new Map<string, string>();
  /** Calls whose diff the approval question already showed. */
  private readonly previewed = new Set<string>();
  /** The reasoning of the last task, for /reasoning. */
  lastReasoning = '';
  /** Answer text on the screen turned out to be reasoning: the reasoning that follows is not shown again. */
  private retracted = false;
  /** The last tool call, "shell npm test", for the spinner while it runs. */
  lastCall = '';
  /** What the sub-agent that last reported is doing, for the spinner; unset once none runs. */
  subagentStatus: string | undefined;
  private readonly subagents: SubagentBlocks;

  constructor(
    out: NodeJS.WriteStream,
    private readonly err: NodeJS.WriteStream,
    readonly styles: ReplStyles,
  ) {
    this.markdown = new MarkdownStream((text) => out.write(text), styles.out, styles.outColor);
    this.subagents = new SubagentBlocks(err, styles.err);
  }

  render(raw: AgentEvent): void {
    // What the model and the tools wrote is shown, never obeyed by the terminal.
    const event = visibleDeep(raw);
    const style = this.styles.err;
    switch (event.type) {
      case 'turn_start':
        break;
      case 'text_delta':
        this.endThinking();
        this.retracted = false;
        this.markdown.push(event.text);
        break;
      case 'text_retracted': {
        this.settle();
        const thought = event.text.trim();
        if (thought)
          this.lastReasoning = this.lastReasoning ? `${this.lastReasoning}\n\n${thought}` : thought;
        this.line(style.dim('✻ that was the model’s reasoning · /reasoning shows it'));
        this.retracted = true;
        break;
      }
      case 'reasoning_delta':
        if (!this.retracted) this.think(event.text);
        break;
      case 'retry':
        this.line(style.yellow(`↻ ${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)}s`));
        break;
      case 'tool_call':
        this.retracted = false;
        this.lastCall = callRow(event);
        this.calls.set(event.call.id, this.lastCall);
        this.settle();
        break;
      case 'approval_request':
        if (event.preview !== undefined) this.previewed.add(event.call.id);
        this.settle();
        break;
      case 'tool_result': {
        const label = this.calls.get(event.callId) ?? event.name;
        const status = event.ok ? style.green('✓') : style.red('✗');
        const detail = event.ok ? '' : ` ${style.red(firstLine(event.output))}`;
        this.line(`${status} ${style.cyan(label)} ${style.dim(duration(event.ms))}${detail}`);
        if (event.display && isDiff(event.display) && !this.previewed.has(event.callId))
          this.line(indent(colorDiff(event.display, style, DIFF_LINES)));
        break;
      }
      case 'warning':
        this.line(style.yellow(`! ${event.message}`));
        break;
      case 'compaction':
        this.line(style.yellow(`↧ compacted the conversation: ${event.before} → ${event.after} tokens`));
        break;
      case 'done':
        this.settle();
        if (event.reason === 'aborted') this.line(style.yellow('Interrupted'));
        else if (event.reason === 'error') this.line(style.red(`Error: ${event.text}`));
        else if (event.reason !== 'completed') this.line(style.yellow(event.text));
        this.calls.clear();
        this.previewed.clear();
        break;
      case 'steer':
        this.line(style.cyan(`› ${event.text}`));
        break;
      case 'subagent_start':
      case 'subagent_event':
      case 'subagent_end':
        this.settle();
        this.subagents.render(event, (text) => this.writeErr(text));
        this.subagentStatus =
          event.type === 'subagent_end' ? undefined : (this.subagents.status(event) ?? this.subagentStatus);
        break;
      case 'session':
      case 'usage':
      case 'tool_progress':
        break;
    }
  }

  /** A new task: what the last one thought is forgotten. */
  begin(): void {
    this.lastReasoning = '';
  }

  /** Brings the terminal to the start of a line, with nothing held back: before a spinner, a prompt or a note. */
  settle(): void {
    this.endThinking();
    this.markdown.end();
    if (!this.markdown.atLineStart) this.markdown.push('\n');
    if (!this.errAtLineStart) this.writeErr('\n');
  }

  /** One line on stderr, on a line of its own. */
  line(text: string): void {
    this.makeRoom();
    this.writeErr(`${text}\n`);
  }

  /** Someone else writes to stderr next: at the start of a line, and no open sub-agent block folds over it. */
  makeRoom(): void {
    this.subagents.interrupt();
    this.settle();
  }

  private think(text: string): void {
    const style = this.styles.err;
    if (!this.thinking) {
      this.settle();
      this.thinking = { text: '', started: performance.now(), rows: new RowCounter(columnsOf(this.err)) };
      this.writeThinking(style.dim('✻ thinking'));
      this.writeThinking('\n');
    }
    this.thinking.text += text;
    this.writeThinking(style.dim(text));
  }

  private writeThinking(text: string): void {
    this.thinking?.rows.add(text);
    this.writeErr(text);
  }

  /**
   * Folds the reasoning just shown into one line. Only when all of it is still on the screen:
   * the cursor cannot go up into the scrollback, and a terminal of unknown height gets it unfolded.
   */
  private endThinking(): void {
    const thinking = this.thinking;
    if (!thinking) return;
    this.thinking = undefined;
    if (!this.errAtLineStart) {
      thinking.rows.add('\n');
      this.writeErr('\n');
    }
    const thought = thinking.text.trim();
    if (thought) this.lastReasoning = this.lastReasoning ? `${this.lastReasoning}\n\n${thought}` : thought;
    const height = this.err.isTTY ? (this.err.rows ?? 0) : 0;
    if (thinking.rows.rows >= height) return;
    const seconds = ((performance.now() - thinking.started) / 1000).toFixed(1);
    this.writeErr(
      `\x1b[${thinking.rows.rows}A\r\x1b[J${this.styles.err.dim(`✻ thought for ${seconds}s · /reasoning shows it`)}\n`,
    );
  }

  private writeErr(text: string): void {
    const plain = stripAnsi(text);
    this.err.write(text);
    if (plain) this.errAtLineStart = plain.endsWith('\n');
  }
}

function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
