import type { Memory, MemoryKind } from './types.js';

const HEADINGS: Record<MemoryKind, string> = {
  fact: 'Facts',
  preference: 'Preferences',
  learning: 'Learnings',
  skill: 'Skills',
};

/**
 * Memories as Markdown, grouped by kind, each line with where it came from: readable as it is, and
 * (without the comments) usable as a ~/.hearth/MEMORY.md.
 */
export function memoriesMarkdown(memories: readonly Memory[]): string {
  const out = ['# Hearth memory', ''];
  for (const kind of Object.keys(HEADINGS) as MemoryKind[]) {
    const group = memories.filter((m) => m.kind === kind);
    if (group.length === 0) continue;
    out.push(`## ${HEADINGS[kind]}`, '');
    for (const memory of group)
      out.push(`- ${memory.text.replace(/\s+/g, ' ').trim()} <!-- ${provenance(memory)} -->`);
    out.push('');
  }
  if (out.length === 2) out.push('(no memories)', '');
  return out.join('\n');
}

/** "#12 · project /ws · session abc, message 4": where a memory belongs and came from. */
function provenance(memory: Memory): string {
  const scope = memory.workspace === null ? 'user' : `project ${memory.workspace}`;
  const from = memory.sourceFile
    ? `from ${memory.sourceFile}`
    : memory.sessionId
      ? `session ${memory.sessionId}${memory.messageSeq === null ? '' : `, message ${memory.messageSeq}`}`
      : `added by ${memory.origin}`;
  return `#${memory.id} · ${scope} · ${from}`;
}
