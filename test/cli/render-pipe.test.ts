import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { makeStyle, TerminalRenderer } from '../../src/cli/render.js';

/** A stream that keeps each write, to see when the answer went out and in what pieces. */
function sink() {
  const writes: string[] = [];
  return {
    writes,
    stream: { write: (text: string) => writes.push(text) } as unknown as NodeJS.WritableStream,
  };
}

const text = (t: string): AgentEvent => ({ type: 'text_delta', text: t });
const call = (id: string): AgentEvent => ({
  type: 'tool_call',
  call: { id, name: 'read_file', arguments: '{"path":"a.txt"}' },
});
const done: AgentEvent = { type: 'done', reason: 'completed', text: '', turns: 1 };

function piped() {
  const out = sink();
  const err = sink();
  const renderer = new TerminalRenderer(out.stream, err.stream, makeStyle(false), true);
  const render = (...events: AgentEvent[]) => {
    for (const event of events) renderer.render(event);
  };
  return { out, err, render };
}

describe('the answer into a pipe', () => {
  it('goes out a line at a time as it streams, the last line when the run ends', () => {
    const { out, render } = piped();
    render({ type: 'turn_start', turn: 1 }, text('First li'));
    expect(out.writes).toEqual([]);
    render(text('ne.\nSecond'));
    expect(out.writes).toEqual(['First line.\n']);
    render(text(' line.'), done);
    expect(out.writes.join('')).toBe('First line.\nSecond line.\n');
  });

  it('is not broken by lines on stderr, and each turn of a run is its own paragraph', () => {
    const { out, err, render } = piped();
    render({ type: 'turn_start', turn: 1 }, text('Let me look'));
    render({ type: 'warning', message: 'slow server' });
    render(text('.'), call('c1'));
    render({ type: 'turn_start', turn: 2 }, text('It is empty.'), done);
    expect(out.writes.join('')).toBe('Let me look.\n\nIt is empty.\n');
    expect(err.writes.join('')).toContain('! slow server');
    // A second run of the same renderer (attach) starts on the next line, not a new paragraph.
    render({ type: 'turn_start', turn: 1 }, text('Again.'), done);
    expect(out.writes.join('')).toBe('Let me look.\n\nIt is empty.\nAgain.\n');
  });

  it('drops the unfinished line of an attempt that is retried', () => {
    const { out, render } = piped();
    render({ type: 'turn_start', turn: 1 }, text('Done:\nhalf a li'));
    render({ type: 'retry', attempt: 1, delayMs: 100, reason: 'connection dropped' });
    render(text('Done:\nall of it.'), done);
    expect(out.writes.join('')).toBe('Done:\nDone:\nall of it.\n');
  });
});
