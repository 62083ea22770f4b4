import type { SubagentEvent } from '../../agent/events.js';
import type { Style } from '../render.js';
import { SubagentLines } from '../subagent-lines.js';
import { columnsOf, RowCounter } from '../text-width.js';

interface Block {
  /** Rows on screen since its first line, its own and its sub-agents'. */
  rows: number;
  /** Nothing else was written inside it: it can be folded without erasing anyone else's lines. */
  clean: boolean;
}

/**
 * Sub-agents in the REPL: each is a block, indented by depth, showing its tool rows while it runs;
 * when it ends, the block folds into its one end line (status, summary, calls, tokens), so a long
 * decomposition leaves a short tree behind. It folds only when all of it is still on the screen
 * and nothing else was written inside it (a sibling running side by side, an approval question):
 * the cursor cannot reach into the scrollback, and erasing must not take others' lines with it.
 * `/agents` shows a folded block's session again.
 */
export class SubagentBlocks {
  private readonly lines: SubagentLines;
  private readonly open = new Map<string, Block>();

  constructor(
    private readonly err: NodeJS.WriteStream,
    style: Style,
  ) {
    this.lines = new SubagentLines(style);
  }

  /** Writes what `event` shows, folding the block it ends where it can. */
  render(event: SubagentEvent, write: (text: string) => void): void {
    if (event.type === 'subagent_event' && event.event.type === 'approval_request') this.interrupt();
    const end = event.type === 'subagent_end' ? this.open.get(event.id) : undefined;
    if (end) {
      this.open.delete(event.id);
      const height = this.err.isTTY ? (this.err.rows ?? 0) : 0;
      if (end.clean && end.rows > 0 && end.rows < height) {
        write(`\x1b[${end.rows}A\r\x1b[J`);
        for (const [id, block] of this.open) if (this.lines.descends(event.id, id)) block.rows -= end.rows;
      }
    }
    for (const line of this.lines.lines(event)) {
      const rows = new RowCounter(columnsOf(this.err));
      rows.add(`${line.text}\n`);
      for (const [id, block] of this.open) {
        if (this.lines.descends(line.owner, id)) block.rows += rows.rows;
        else block.clean = false;
      }
      if (event.type === 'subagent_start') this.open.set(event.id, { rows: rows.rows, clean: true });
      write(`${line.text}\n`);
    }
  }

  /** What a running sub-agent is doing now, for the spinner; undefined when nothing changed. */
  status(event: SubagentEvent): string | undefined {
    return this.lines.status(event);
  }

  /** Something else is written to the screen: the blocks open now keep their lines. */
  interrupt(): void {
    for (const block of this.open.values()) block.clean = false;
  }
}
