import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { HooksSettings } from './hooks-schema.js';

/**
 * The workspace files a hook command names, such as `"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh`.
 * Hooks run on the host, and the workspace can be written by the agent's sandboxed commands: a
 * script there, changed after the user approved the hook, would be code the sandbox planted
 * running outside it. So these files are pinned by content: when a project file is approved
 * (trust.ts records their hashes with it) and when a session starts (hooks.ts checks them before
 * every run). A file that did not exist is pinned as absent.
 *
 * Only the words of the command are looked at: a script that imports other workspace files, or a
 * command that runs workspace code by name (`npx prettier` picks node_modules/.bin), is beyond this;
 * docs/skills-and-hooks.md says to keep such hooks' code outside the workspace.
 */
const WORD = /"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s;&|<>()"']+)/g;
const PROJECT_VARS = /\$\{?(CLAUDE_PROJECT_DIR|HEARTH_PROJECT_DIR)\}?/g;
/** What a command writes to (`>> log.txt`) is its output, not code it runs, and changes by design. */
const REDIRECT_TARGET = /\d*>>?\|?\s*(?:"[^"]*"|'[^']*'|[^\s;&|<>()]+)/g;

/** Absolute paths inside the workspace that `command` names (run with the workspace as its directory). */
export function filesNamedBy(command: string, workspace: string): string[] {
  const found = new Set<string>();
  // Quoted pieces next to each other form one word: "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh.
  for (const chunk of command
    .replace(REDIRECT_TARGET, ' ')
    .split(/[\s;&|<>()]+(?=(?:[^"']*["'][^"']*["'])*[^"']*$)/)) {
    let word = '';
    for (const match of chunk.matchAll(WORD)) word += match[1] ?? match[2] ?? match[3] ?? '';
    word = word.replace(PROJECT_VARS, workspace);
    if (word.startsWith('~') || word.includes('$') || !(word.includes('/') || /\.\w+$/.test(word))) continue;
    const abs = path.resolve(workspace, word);
    const rel = path.relative(workspace, abs);
    if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) found.add(abs);
  }
  return [...found];
}

/** Every workspace file any configured hook names. */
export function hookFiles(hooks: HooksSettings | undefined, workspace: string): string[] {
  const commands = Object.values(hooks ?? {}).flatMap((groups) =>
    (groups ?? []).flatMap((group) => group.hooks.map((hook) => hook.command)),
  );
  return [...new Set(commands.flatMap((command) => filesNamedBy(command, workspace)))].sort();
}

/** A file's content hash, or `absent`. */
async function fileHash(file: string): Promise<string> {
  try {
    return createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
  } catch {
    return 'absent';
  }
}

/** Path → hash for each file. */
export async function hashFiles(files: readonly string[]): Promise<Record<string, string>> {
  const entries = await Promise.all(files.map(async (file) => [file, await fileHash(file)] as const));
  return Object.fromEntries(entries);
}
