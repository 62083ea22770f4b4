import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The memory files people keep by hand, beside SOUL.md in the Hearth home: USER.md (who the user is,
 * how they like to work: shown at the start of every session) and MEMORY.md (notes, one per bullet
 * or paragraph: kept as user-wide memories and found by search like any other). A project's own
 * notes (AGENTS.md, else CLAUDE.md) are part of the system prompt instead (agent/project-context.ts).
 */
export function userFiles(hearthHome: string): { profile: string; notes: string } {
  return { profile: join(hearthHome, 'USER.md'), notes: join(hearthHome, 'MEMORY.md') };
}

export async function readOptional(path: string): Promise<string | undefined> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? undefined : text;
  } catch {
    return undefined;
  }
}

/** One memory is at most this long; a longer note is cut (the file stays as it is). */
const MAX_ENTRY_CHARS = 1000;

/**
 * Splits a MEMORY.md into notes: each list item (with its continuation lines) or paragraph is one;
 * headings are kept as the context of the notes under them, not as notes of their own.
 */
export function memoryFileEntries(text: string): string[] {
  const entries: string[] = [];
  let current: string[] = [];
  let heading = '';
  const flush = () => {
    const body = current.join(' ').replace(/\s+/g, ' ').trim();
    if (body) entries.push((heading ? `${heading}: ${body}` : body).slice(0, MAX_ENTRY_CHARS));
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    const headingMatch = /^#{1,6}\s+(.*)$/.exec(line);
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (headingMatch) {
      flush();
      heading = headingMatch[1]!.trim();
    } else if (item) {
      flush();
      current.push(item[1]!);
    } else if (line.trim() === '') {
      flush();
    } else {
      current.push(line.trim());
    }
  }
  flush();
  return [...new Set(entries)];
}
