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
      "You are Hearth, a careful agent doing tasks on the user's machine with tools.",
      `Workspace: ${opts.workspace} (paths are relative to it; you cannot leave it).`,
      '- Read files and list directories instead of guessing.',
      '- Make the change asked for, then check it if you can.',
      '- If a tool fails, read the error and fix the call; never repeat it unchanged.',
      '- When done, reply with a short summary, without calling a tool.',
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
