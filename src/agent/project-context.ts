import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What a workspace tells the agent about itself, read once when a session starts. */
export interface ProjectContext {
  /** .hearth/HEARTH.md, else AGENTS.md, else CLAUDE.md: conventions, commands, what to avoid. */
  notes?: { file: string; text: string };
  /** .hearth/SOUL.md: the personality the user wants. */
  soul?: string;
}

/** Every character of these goes into every request: long files are cut, with a note saying so. */
const MAX_NOTES_CHARS = 6000;
const MAX_SOUL_CHARS = 1500;

export async function readProjectContext(workspace: string): Promise<ProjectContext> {
  const context: ProjectContext = {};
  // CLAUDE.md last: a project kept for Claude Code already says there what an agent should know.
  for (const file of ['.hearth/HEARTH.md', 'AGENTS.md', 'CLAUDE.md']) {
    const text = await readText(join(workspace, file));
    if (text) {
      context.notes = { file, text: clip(text, MAX_NOTES_CHARS, file) };
      break;
    }
  }
  const soul = await readText(join(workspace, '.hearth', 'SOUL.md'));
  if (soul) context.soul = clip(soul, MAX_SOUL_CHARS, '.hearth/SOUL.md');
  return context;
}

async function readText(path: string): Promise<string | undefined> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? undefined : text;
  } catch {
    return undefined;
  }
}

function clip(text: string, max: number, file: string): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n[... ${file} is longer; read it with read_file for the rest]`;
}
