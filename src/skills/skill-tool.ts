import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { isWithin } from '../sandbox/workspace.js';
import { truncateMiddle } from '../tools/truncate.js';
import { defineTool, ToolError } from '../tools/types.js';
import type { Skill } from './discover.js';

/** A skill's instructions are meant to be read whole; past this they are cut, with a hint. */
const MAX_BODY_CHARS = 24_000;
const MAX_FILES_LISTED = 40;

/** Folders a skill's file list does not descend into. */
const SKIPPED = new Set(['node_modules', '.git', '__pycache__', '.venv']);

/**
 * `skill {name}` loads a skill's instructions when the model needs them (only names and
 * descriptions sit in the system prompt); `skill {name, file}` reads a file from the skill's
 * folder, which may lie outside the workspace (the user's ~/.hearth/skills). Reads stay inside the
 * folder: a link that leads out of it is refused.
 */
export function skillTool(skills: readonly Skill[]) {
  const byName = new Map(skills.map((s) => [s.name, s]));
  return defineTool({
    name: 'skill',
    description: "Load a skill's instructions by name (see Skills); with file, read a file from its folder.",
    parameters: z.object({
      name: z.string().min(1),
      file: z.string().optional().describe("A path inside the skill's folder"),
    }),
    mutates: false,
    label: (args) => `skill ${args.name}${args.file ? ` ${args.file}` : ''}`,
    async run(args, ctx) {
      const skill = byName.get(args.name);
      if (!skill) {
        throw new ToolError(
          `No skill named "${args.name}". Skills: ${[...byName.keys()].join(', ') || 'none'}.`,
        );
      }
      if (args.file !== undefined) return readSkillFile(skill, args.file);
      const where = isWithin(ctx.workspace, skill.dir) ? path.relative(ctx.workspace, skill.dir) : skill.dir;
      const files = await listFiles(skill.dir);
      const body = truncateMiddle(skill.body, MAX_BODY_CHARS, {
        hint: `read the rest with skill {"name": "${skill.name}", "file": "SKILL.md"}`,
      }).text;
      const listing =
        files.length > 0
          ? `\n\nFiles in its folder (${where}); read one with skill {"name": "${skill.name}", "file": PATH}:\n${files.join('\n')}`
          : '';
      return `# Skill: ${skill.name}\n\n${body}${listing}`;
    },
  });
}

async function readSkillFile(skill: Skill, file: string): Promise<string> {
  const wanted = path.resolve(skill.dir, file);
  const real = await realpath(wanted).catch(() => undefined);
  if (real === undefined || !isWithin(skill.dir, real)) {
    throw new ToolError(`"${file}" is not a file in the folder of skill "${skill.name}".`);
  }
  const info = await lstat(real);
  if (!info.isFile())
    throw new ToolError(`"${file}" is not a file; the skill's files are listed when you load it.`);
  return readFile(real, 'utf8');
}

/** The skill's files besides SKILL.md, relative to its folder, two levels deep. */
async function listFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (at: string, depth: number) => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= MAX_FILES_LISTED || SKIPPED.has(entry.name)) continue;
      const full = path.join(at, entry.name);
      if (entry.isDirectory() && depth < 2) await walk(full, depth + 1);
      else if (entry.isFile() && !(depth === 0 && entry.name === 'SKILL.md'))
        found.push(path.relative(dir, full));
    }
  };
  await walk(dir, 0);
  return found;
}
