import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { type PermissionMode, permissionModeNamed } from '../permissions/modes.js';

/**
 * A named agent a sub-agent can run as: `.hearth/agents/NAME.md`, or `.claude/agents/NAME.md` in
 * the format users already have (Claude Code's: camelCase keys and its own tool names are read too).
 * The workspace is writable by the agent itself, so nothing here is trusted to widen anything: the
 * permission mode is only ever made stricter, tools only picked from the parent's, turns only fewer
 * (see host.ts).
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Tool names or groups, as written (Hearth's, or another agent's such as `Read`); unset: the parent's. */
  tools?: string[];
  /** A model profile name, or a model of the same server; unset: the parent's model. */
  model?: string;
  maxTurns?: number;
  /** The mode asked for; applied only when it is at least as strict as the parent's. */
  permissionMode?: PermissionMode;
  /** The body: what the agent is for and how to work. */
  instructions: string;
  /** Where it was read from, relative to the workspace. */
  file: string;
}

export interface LoadedDefinitions {
  definitions: AgentDefinition[];
  /** One line per file that was skipped or field that was ignored, for the user. */
  notes: string[];
}

/** Hearth's own folder wins over Claude Code's for the same name. */
const FOLDERS = ['.hearth/agents', '.claude/agents'];
const NAME = /^[A-Za-z0-9][\w.-]{0,63}$/;
const MAX_DESCRIPTION_CHARS = 200;
const MAX_INSTRUCTIONS_CHARS = 8000;
const MAX_FILES = 100;

/** Claude Code's permission modes: those that mean "as usual" inherit the parent's mode. */
const FOREIGN_MODES: Record<string, PermissionMode | 'inherit'> = {
  default: 'inherit',
  acceptedits: 'inherit',
  bypasspermissions: 'auto',
  plan: 'plan',
};

/** Reads every definition of the workspace; unreadable files and fields become notes, never errors. */
export async function loadAgentDefinitions(workspace: string): Promise<LoadedDefinitions> {
  const byName = new Map<string, AgentDefinition>();
  const notes: string[] = [];
  // Loaded only where there are definitions: the parser is large, and most runs have none.
  let parseYaml: YamlParser | undefined;
  for (const folder of FOLDERS) {
    let names: string[];
    try {
      names = (await readdir(join(workspace, folder))).filter((n) => n.endsWith('.md')).sort();
    } catch {
      continue;
    }
    for (const name of names.slice(0, MAX_FILES)) {
      const file = `${folder}/${name}`;
      let text: string;
      try {
        text = await readFile(join(workspace, file), 'utf8');
      } catch {
        continue;
      }
      parseYaml ??= (await import('../config/yaml.js')).parseYaml;
      const parsed = parseDefinition(text, file, parseYaml);
      notes.push(...parsed.notes);
      if (parsed.definition && !byName.has(parsed.definition.name.toLowerCase()))
        byName.set(parsed.definition.name.toLowerCase(), parsed.definition);
    }
  }
  return { definitions: [...byName.values()], notes };
}

type YamlParser = (text: string) => unknown;

/**
 * One definition file: YAML frontmatter between `---` lines, then the instructions. The YAML
 * parser is passed in (src/config/yaml.ts) so that loading this module does not load it.
 */
export function parseDefinition(
  text: string,
  file: string,
  parseYaml: YamlParser,
): { definition?: AgentDefinition; notes: string[] } {
  const notes: string[] = [];
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  let front: Record<string, unknown> = {};
  if (match) {
    try {
      const value = parseYaml(match[1]!) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value))
        front = value as Record<string, unknown>;
    } catch (err) {
      return { notes: [`Skipped ${file}: its frontmatter is not valid YAML (${(err as Error).message}).`] };
    }
  }
  const body = (match ? match[2]! : text).trim();
  const name = stringField(front.name) ?? basename(file, '.md');
  if (!NAME.test(name)) {
    return { notes: [`Skipped ${file}: "${name}" is not a usable agent name (letters, digits, - _ .).`] };
  }
  const definition: AgentDefinition = {
    name,
    description: clip(stringField(front.description) ?? '', MAX_DESCRIPTION_CHARS),
    instructions: clip(body, MAX_INSTRUCTIONS_CHARS),
    file,
  };
  const tools = listField(front.tools);
  if (tools) definition.tools = tools;
  const model = stringField(front.model);
  if (model && model.toLowerCase() !== 'inherit') definition.model = model;
  const turns = front.max_turns ?? front.maxTurns;
  if (turns !== undefined) {
    if (typeof turns === 'number' && Number.isInteger(turns) && turns > 0) definition.maxTurns = turns;
    else notes.push(`${file}: max_turns must be a positive whole number; ignored.`);
  }
  const mode = stringField(front.permission_mode ?? front.permissionMode);
  if (mode) {
    const ours = permissionModeNamed(mode) ?? FOREIGN_MODES[mode.toLowerCase()];
    if (ours === undefined)
      notes.push(`${file}: permission mode "${mode}" is not known; the parent's applies.`);
    else if (ours !== 'inherit') definition.permissionMode = ours;
  }
  return { definition, notes };
}

function stringField(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** `tools: Read, Grep` (Claude Code's form) or a YAML list. */
function listField(value: unknown): string[] | undefined {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  if (!items) return undefined;
  return items.map((item) => String(item).trim()).filter((item) => item !== '');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
