import { z } from 'zod';

/**
 * A SKILL.md as the Agent Skills specification defines it (https://agentskills.io/specification):
 * YAML frontmatter between `---` lines, then Markdown instructions. `name` (1-64 characters:
 * lowercase letters, digits and single hyphens, not at either end, and the folder's own name) and
 * `description` (1-1024) are required; `license`, `compatibility` (up to 500), `metadata` (string
 * to string) and `allowed-tools` (space-delimited) are optional. Claude Code's own additions
 * (`argument-hint`, `disable-model-invocation`, `user-invocable`, ...) are accepted, and the two
 * that say who may invoke a skill are honoured.
 */
export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const frontmatter = z.looseObject({
  name: z
    .string({ error: 'name is missing' })
    .min(1)
    .max(64, 'name is longer than 64 characters')
    .regex(SKILL_NAME, 'name may hold only lowercase letters, digits and single hyphens, not at either end'),
  description: z
    .string({ error: 'description is missing' })
    .trim()
    .min(1, 'description is empty')
    .max(1024, 'description is longer than 1024 characters'),
  license: z.string().optional(),
  compatibility: z.string().max(500, 'compatibility is longer than 500 characters').optional(),
  metadata: z.record(z.string(), z.string(), { error: 'metadata must map names to strings' }).optional(),
  'allowed-tools': z.union([z.string(), z.array(z.string())]).optional(),
  'argument-hint': z.string().optional(),
  'disable-model-invocation': z.boolean().optional(),
  'user-invocable': z.boolean().optional(),
});

export interface SkillFile {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** Tools the skill expects to use. Shown, never granted: a skill cannot pre-approve anything. */
  allowedTools: string[];
  argumentHint?: string;
  /** False: not listed for the model, only the user invokes it (`disable-model-invocation`). */
  modelInvocable: boolean;
  /** False: hidden from `/NAME` (`user-invocable: false`). */
  userInvocable: boolean;
  body: string;
}

export type ParsedSkill = { ok: true; skill: SkillFile } | { ok: false; reason: string };

/**
 * Reads a SKILL.md's text; `folder` is the name of the folder it is in, which `name` must equal.
 * The YAML parser is passed in (src/config/yaml.ts), so that only runs with skills load it.
 */
export function parseSkillFile(
  text: string,
  folder: string,
  parseYaml: (text: string) => unknown,
): ParsedSkill {
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { ok: false, reason: 'SKILL.md does not start with YAML frontmatter between --- lines' };
  let data: unknown;
  try {
    data = parseYaml(match[1]!);
  } catch (err) {
    return {
      ok: false,
      reason: `its frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, reason: 'its frontmatter is not a mapping of fields' };
  const parsed = frontmatter.safeParse(data);
  if (!parsed.success) {
    return { ok: false, reason: parsed.error.issues.map((issue) => issue.message).join('; ') };
  }
  const fields = parsed.data;
  if (fields.name !== folder)
    return { ok: false, reason: `name "${fields.name}" does not match its folder "${folder}"` };
  const tools = fields['allowed-tools'];
  return {
    ok: true,
    skill: {
      name: fields.name,
      description: fields.description,
      license: fields.license,
      compatibility: fields.compatibility,
      metadata: fields.metadata,
      allowedTools: (Array.isArray(tools) ? tools : (tools ?? '').split(/[\s,]+/)).filter(Boolean),
      argumentHint: fields['argument-hint'],
      modelInvocable: fields['disable-model-invocation'] !== true,
      userInvocable: fields['user-invocable'] !== false,
      body: text.slice(match[0].length).trim(),
    },
  };
}

/** A SKILL.md's text from its fields, as `promote_tool` and the reflection engine write one. */
export function renderSkillFile(
  fields: { name: string; description: string; metadata?: Record<string, string> },
  body: string,
): string {
  const lines = [`name: ${fields.name}`, `description: ${JSON.stringify(fields.description)}`];
  if (fields.metadata && Object.keys(fields.metadata).length > 0) {
    lines.push('metadata:');
    for (const [key, value] of Object.entries(fields.metadata))
      lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  }
  return `---\n${lines.join('\n')}\n---\n\n${body.trim()}\n`;
}
