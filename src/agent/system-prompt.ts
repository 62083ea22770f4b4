import type { ToolSchema } from '../llm/types.js';
import { type OutputStyle, outputStyleLine } from './output-style.js';
import type { ProjectContext } from './project-context.js';

/**
 * The system prompt. It is fixed for a whole session and holds nothing that changes (no
 * clock, no counters, no todo list), so local servers can keep its tokens in their prompt
 * cache; changing state is appended to the conversation instead.
 */
export function buildSystemPrompt(opts: {
  workspace: string;
  context?: ProjectContext;
  /** For models without native tool calling: the tools, described in the prompt itself. */
  toolsInPrompt?: ToolSchema[];
  /** Sections other subsystems add, fixed for the session (the skills list). */
  sections?: string[];
  /** The library caller's own instructions. */
  instructions?: string;
  /** How answers are shaped (`output_style`): one line, after the rules. */
  outputStyle?: OutputStyle;
}): string {
  const parts = [
    [
      "You are Hearth, an agent doing tasks on the user's machine with tools.",
      `Workspace: ${shortPath(opts.workspace)}, the current directory (you cannot leave it).`,
      '- Read and list instead of guessing.',
      '- Make the change asked for, then check it.',
      '- If a tool fails, fix the call from its error; never repeat it unchanged.',
      '- When done, reply with a short summary and no tool call.',
      ...(opts.outputStyle ? [`- ${outputStyleLine(opts.outputStyle)}`] : []),
    ].join('\n'),
  ];
  if (opts.toolsInPrompt?.length) parts.push(describeTools(opts.toolsInPrompt));
  const { notes, soul } = opts.context ?? {};
  if (notes) parts.push(`## Project notes (${notes.file})\n${notes.text}`);
  if (soul) parts.push(`## Personality\n${soul}`);
  for (const section of opts.sections ?? []) if (section.trim()) parts.push(section.trim());
  if (opts.instructions) parts.push(`## Instructions\n${opts.instructions}`);
  return parts.join('\n\n');
}

/** The most of the workspace's path the prompt shows: a deep workspace must not cost more tokens. */
export const WORKSPACE_PATH_CHARS = 40;

/**
 * The workspace's path as the prompt shows it: whole when short, else its last folders after "…/",
 * enough to tell one project from another (tools take paths relative to it, never this one).
 */
export function shortPath(path: string): string {
  if (path.length <= WORKSPACE_PATH_CHARS) return path;
  const tail = path.slice(-(WORKSPACE_PATH_CHARS - 2));
  const cut = tail.indexOf('/');
  return `…/${cut >= 0 && cut < tail.length - 1 ? tail.slice(cut + 1) : tail}`;
}

/** The calling convention and each tool's schema, one line each, in the Hermes format Hearth parses. */
function describeTools(tools: ToolSchema[]): string {
  return [
    '## Tools',
    'To call a tool, write exactly one block like this and stop:',
    '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
    'Available tools:',
    ...tools.map((t) => JSON.stringify(t.function)),
  ].join('\n');
}
