import type { ChatMessage } from '../llm/types.js';
import { withoutMemoryBlock } from '../memory/memory-block.js';
import type { SessionRow, TurnSpeed } from '../store/rows.js';
import { terminalJson, visible } from './sanitize.js';
import { speedText } from './speed-text.js';

/**
 * A session as Markdown: readable by people, with each tool call and its result. Control
 * characters in what the model and the tools wrote are shown (sanitize.ts), since this is read
 * at a terminal or with `cat`.
 */
export function transcriptMarkdown(
  row: SessionRow,
  messages: ChatMessage[],
  subagents: readonly SessionRow[] = [],
  /** How fast replies came, by the seq of the assistant message (the message's index). */
  speeds: readonly TurnSpeed[] = [],
): string {
  const speedOf = new Map(speeds.map((s) => [s.seq, speedText(s.speed)]));
  const out = [
    `# ${row.title || 'Untitled session'}`,
    '',
    `- id: ${row.id}`,
    `- workspace: ${row.workspace}`,
    `- model: ${row.model || 'unknown'}`,
    `- started: ${new Date(row.createdAt).toISOString()}`,
    `- status: ${row.status}`,
  ];
  if (row.parentId) {
    out.push(
      row.depth > 0
        ? `- sub-agent (depth ${row.depth}) of: ${row.parentId} (hearth sessions show ${row.parentId})`
        : `- forked from: ${row.parentId}`,
    );
  }
  if (subagents.length > 0) {
    out.push('- sub-agents:');
    for (const child of subagents)
      out.push(
        `  - ${child.id} (${child.status}): ${child.title || 'untitled'} (hearth sessions show ${child.id})`,
      );
  }
  out.push('');
  for (const [seq, m] of messages.entries()) {
    switch (m.role) {
      case 'system':
        out.push('## System', '', fence(m.content), '');
        break;
      case 'user': {
        // What the person wrote; the notes from memory the model got with it are only mentioned.
        const typed = withoutMemoryBlock(m.content);
        out.push('## User', '', typed, '');
        if (typed !== m.content) out.push('_(sent with notes from earlier sessions: the memory block)_', '');
        break;
      }
      case 'assistant':
        out.push('## Assistant', '');
        if (m.content) out.push(m.content, '');
        for (const call of m.tool_calls ?? [])
          out.push(`**→ ${call.function.name}** \`${call.function.arguments}\``, '');
        if (speedOf.get(seq)) out.push(`_${speedOf.get(seq)}_`, '');
        break;
      case 'tool':
        out.push(fence(m.content), '');
        break;
    }
  }
  return visible(out.join('\n'));
}

/** A session as JSON lines: one header line, then one line per message; nothing in it acts on a terminal. */
export function transcriptJsonl(row: SessionRow, messages: ChatMessage[]): string {
  return [
    terminalJson({ type: 'session', ...row }),
    ...messages.map((m) => terminalJson({ type: 'message', ...m })),
  ]
    .join('\n')
    .concat('\n');
}

function fence(text: string): string {
  const ticks = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${ticks}\n${text}\n${ticks}`;
}
