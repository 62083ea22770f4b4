import { type AgentEvent, shownCall, type UnwrappedCall } from '../agent/events.js';
import type { ToolCall } from '../llm/types.js';
import { inline, visible, visibleDeep } from './sanitize.js';
import { SubagentLines } from './subagent-lines.js';
import { loadTextWidth, truncateToWidth } from './text-width.js';

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** ANSI styles, or none when colour is off (NO_COLOR, not a terminal). */
export function makeStyle(color: boolean): Style {
  const wrap = (open: number, close: number) => (text: string) =>
    color ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

export function colorEnabled(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** A call in one line when its tool gave no label: the tool and its key argument. */
export function callLine(call: { name: string; arguments: string }): string {
  return `${call.name} ${keyArgument(call.arguments)}`.trim();
}

/**
 * A tool row's text: the tool's label, or the call in one line. A line break or a control
 * character in it (a file name may hold any) is spelled out, so the row stays one row.
 */
export function callRow(event: { call: ToolCall; label?: string; unwrapped?: UnwrappedCall }): string {
  return event.label !== undefined ? inline(event.label) : callLine(shownCall(event));
}

/** The one argument that says what a call is about, for a one-line summary; line breaks spelled out. */
function keyArgument(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return spelledLine(args);
  }
  if (!parsed || typeof parsed !== 'object') return spelledLine(String(parsed));
  const record = parsed as Record<string, unknown>;
  for (const key of ['command', 'path', 'pattern', 'paths', 'query', 'url', 'message']) {
    if (record[key] !== undefined)
      return spelledLine(typeof record[key] === 'string' ? record[key] : JSON.stringify(record[key]));
  }
  return spelledLine(JSON.stringify(parsed));
}

function spelledLine(text: string, max = 80): string {
  return truncateToWidth(inline(text).trim(), max);
}

/** Text on one terminal line: control characters shown (sanitize.ts), whitespace collapsed, cut at `max` columns. */
export function oneLine(text: string, max = 80): string {
  return truncateToWidth(visible(text).replace(/\s+/g, ' ').trim(), max);
}

/** How much of a long command output and of a diff one-shot mode shows. */
const OUTPUT_LINES = 12;
const DIFF_LINES = 60;

/**
 * Renders events for a person: what the model says on stdout, as it streams (each turn its own
 * paragraph), everything else (reasoning, tool activity, warnings) on stderr, so
 * `hearth "task" > answer.txt` keeps the model's words without the tool lines. (The final answer
 * alone is the `done` event's `text` in `--json`.)
 */
export class TerminalRenderer {
  private stdoutAtLineStart = true;
  private stderrAtLineStart = true;
  private inReasoning = false;
  private readonly calls = new Map<string, string>();
  /** Calls whose diff the approval question already showed. */
  private readonly previewed = new Set<string>();
  private sessionId = '';
  /** This run's answer so far has text, so the next turn's text starts after a blank line. */
  private wroteText = false;
  private turnStarted = false;
  /** With `piped`: the answer's last line, written once it is complete (or its turn ends). */
  private heldLine = '';
  /** Answer text already out turned out to be reasoning: it is not shown a second time. */
  private retracted = false;
  private readonly subagents: SubagentLines;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: NodeJS.WritableStream,
    private readonly style: Style,
    /**
     * Stdout is a file or a pipe: the answer goes there a line at a time as it streams, and lines
     * said on stderr do not break into it (on a terminal both share the screen, so they must).
     */
    private readonly piped = false,
  ) {
    this.subagents = new SubagentLines(style);
    // Lines cut to a terminal's width want exact widths; into a pipe, cutting a little early is fine.
    if ((err as { isTTY?: boolean }).isTTY) loadTextWidth().catch(() => {});
  }

  render(raw: AgentEvent): void {
    // What the model and the tools wrote is shown, never obeyed by the terminal.
    const event = visibleDeep(raw);
    switch (event.type) {
      case 'text_delta':
        this.endReasoning();
        this.retracted = false;
        if (this.turnStarted && this.wroteText) this.writeAnswer(this.stdoutAtLineStart ? '\n' : '\n\n');
        this.turnStarted = false;
        this.writeAnswer(event.text);
        this.wroteText = true;
        break;
      case 'text_retracted': {
        // A pipe's unfinished line is still held: it is dropped, and the reasoning shows as such.
        // What is out cannot be taken back: said once, and not shown again as reasoning.
        const held = this.piped ? this.heldLine : '';
        if (this.piped) {
          this.heldLine = '';
          this.stdoutAtLineStart = true;
        }
        if (event.text.length > held.length) {
          this.errLine(this.style.dim('↑ that was the model’s reasoning'));
          this.retracted = true;
        }
        break;
      }
      case 'reasoning_delta':
        if (this.retracted) break;
        if (!this.inReasoning) {
          this.errLine(this.style.dim('thinking…'));
          this.inReasoning = true;
        }
        this.writeErr(this.style.dim(event.text));
        break;
      case 'retry':
        this.endReasoning();
        // What the failed attempt streamed is void: what is not out yet stays out.
        if (this.piped && this.heldLine !== '') {
          this.heldLine = '';
          this.stdoutAtLineStart = true;
        }
        this.errLine(
          this.style.yellow(`↻ ${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)}s`),
        );
        break;
      case 'tool_call':
        this.endReasoning();
        this.retracted = false;
        this.endAnswerLine();
        this.calls.set(event.call.id, callRow(event));
        break;
      case 'approval_request':
        if (event.preview !== undefined) this.previewed.add(event.call.id);
        break;
      case 'tool_result': {
        const label = this.calls.get(event.callId) ?? event.name;
        const status = event.ok ? this.style.green('✓') : this.style.red('✗');
        const detail = event.ok ? '' : ` ${this.style.red(firstLine(event.output))}`;
        this.errLine(
          `${status} ${this.style.cyan(label)} ${this.style.dim(`${Math.round(event.ms)}ms`)}${detail}`,
        );
        if (event.display && !this.previewed.has(event.callId)) {
          this.errLine(
            isDiff(event.display)
              ? colorDiff(event.display, this.style, DIFF_LINES)
              : this.style.dim(this.outputTail(event.display, event.callId)),
          );
        }
        if (event.diagnostics) this.errLine(diagnosticLines(event.diagnostics, this.style));
        break;
      }
      case 'warning':
        this.endReasoning();
        this.errLine(this.style.yellow(`! ${event.message}`));
        break;
      case 'done':
        this.endReasoning();
        this.endAnswerLine();
        // Paragraphs part the turns of one run; the next run's answer starts on the next line.
        this.wroteText = false;
        if (['max_iterations', 'loop', 'budget', 'paused', 'blocked'].includes(event.reason))
          this.errLine(this.style.yellow(event.text));
        if (event.reason === 'aborted') this.errLine(this.style.yellow('Interrupted.'));
        if (event.reason === 'error') this.errLine(this.style.red(`Error: ${event.text}`));
        break;
      case 'usage':
        if (event.contextWindow > 0) {
          const share = Math.round((event.contextUsed / event.contextWindow) * 100);
          this.errLine(
            this.style.dim(
              `context ${formatTokens(event.contextUsed)}/${formatTokens(event.contextWindow)} (${share}%)`,
            ),
          );
        }
        break;
      case 'compaction':
        this.errLine(
          this.style.yellow(
            `↧ compacted the conversation: ${formatTokens(event.before)} → ${formatTokens(event.after)} tokens`,
          ),
        );
        break;
      case 'session':
        this.sessionId = event.id;
        break;
      case 'turn_start':
        this.turnStarted = true;
        break;
      case 'subagent_start':
      case 'subagent_event':
      case 'subagent_end':
        this.endReasoning();
        for (const line of this.subagents.lines(event)) this.errLine(line.text);
        break;
      case 'tool_progress':
      case 'steer':
        break;
    }
  }

  /**
   * The last lines of a long output (the model got a shortened copy; the session keeps it whole):
   * a megabyte of build log on the terminal helps nobody.
   */
  private outputTail(display: string, callId: string): string {
    const lines = display.replace(/\n+$/, '').split('\n');
    if (lines.length <= OUTPUT_LINES) return lines.join('\n');
    const where = this.sessionId ? `: hearth sessions output ${this.sessionId} ${callId}` : '';
    return [`… ${lines.length - OUTPUT_LINES} earlier lines${where}`, ...lines.slice(-OUTPUT_LINES)].join(
      '\n',
    );
  }

  private endReasoning(): void {
    if (!this.inReasoning) return;
    this.inReasoning = false;
    if (!this.stderrAtLineStart) this.writeErr('\n');
  }

  /** Writes answer text: at once on a terminal, into a pipe each line once it is complete. */
  private writeAnswer(text: string): void {
    this.stdoutAtLineStart = text.endsWith('\n');
    if (!this.piped) {
      this.out.write(text);
      return;
    }
    const all = this.heldLine + text;
    const end = all.lastIndexOf('\n') + 1;
    if (end > 0) this.out.write(all.slice(0, end));
    this.heldLine = all.slice(end);
  }

  private endAnswerLine(): void {
    if (!this.stdoutAtLineStart) this.writeAnswer('\n');
  }

  private errLine(text: string): void {
    // On a terminal, a line on stderr must not run into the answer's unfinished line.
    if (!this.piped) this.endAnswerLine();
    if (!this.stderrAtLineStart) this.writeErr('\n');
    this.writeErr(`${text}\n`);
  }

  private writeErr(text: string): void {
    this.err.write(text);
    this.stderrAtLineStart = text.endsWith('\n');
  }
}

/** Tool output for people that is a unified diff (edits), as opposed to plain command output. */
export function isDiff(text: string): boolean {
  return text.startsWith('--- ') && text.includes('\n+++ ');
}

/** Added lines green, removed red, hunk headers cyan; lines beyond `maxLines` are counted, not shown. */
export function colorDiff(diff: string, style: Style, maxLines = Number.POSITIVE_INFINITY): string {
  const lines = diff.split('\n');
  const shown = lines.slice(0, maxLines).map((line) => {
    if (line.startsWith('+++') || line.startsWith('---')) return style.dim(line);
    if (line.startsWith('+')) return style.green(line);
    if (line.startsWith('-')) return style.red(line);
    if (line.startsWith('@@')) return style.cyan(line);
    return style.dim(line);
  });
  const hidden = lines.length - shown.length;
  if (hidden > 0) shown.push(style.dim(`… ${hidden} more diff line${hidden === 1 ? '' : 's'}`));
  return shown.join('\n');
}

export function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export function firstLine(text: string): string {
  return oneLine(text.split('\n')[0] ?? '', 120);
}

/** What language servers said about an edit: errors in yellow, the rest dimmed. */
function diagnosticLines(text: string, style: Style): string {
  return text
    .split('\n')
    .map((line) => (/: \d+ errors? \(|^\s+line \d+:/.test(line) ? style.yellow(line) : style.dim(line)))
    .join('\n');
}
