import type { ProjectContext } from '../agent/project-context.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { estimateTokens } from '../llm/tokens.js';
import type { ToolSchema } from '../llm/types.js';
import { readTodos } from '../tools/tracking/index.js';
import type { SessionState } from '../tools/types.js';
import type { AgentDefinition } from './definitions.js';
import type { SubagentResult, SubagentTask } from './types.js';

/**
 * The brief: all a child knows when it starts. It is built from the call, the project's notes
 * (AGENTS.md), the parent's todo item the work serves and, in a decomposition, the results of the
 * tasks it depends on, and never from the parent's conversation: a small model does one job best
 * with a small context. Every part has its own share of a fixed token budget, so the child's first
 * request costs about the same whatever the parent has been through.
 */
export const BRIEF_TOKENS = 1200;

/** The most each part may take; the role and then the notes get what the call leaves, up to theirs. */
const SHARES = {
  objective: 200,
  deliverable: 100,
  dataHint: 200,
  todo: 50,
  /** All dependency results together. */
  dependencies: 200,
  /** A named agent's instructions. */
  role: 250,
  notes: 400,
};

export interface BriefInput {
  task: SubagentTask;
  workspace: string;
  context: ProjectContext;
  definition?: AgentDefinition;
  /** The parent's session state, for the todo item the work serves. */
  parentState: SessionState;
  /** Results of the tasks this one depends on. */
  dependencies: readonly SubagentResult[];
  /** The child's tools, when they are described in the prompt (models without native tool calls). */
  toolsInPrompt?: ToolSchema[];
  /** The name of the tool that ends the child's work. */
  reportTool: string;
}

export interface Brief {
  systemPrompt: string;
  /** The child's first user message. */
  message: string;
}

export function buildBrief(input: BriefInput): Brief {
  const message = briefMessage(input);
  const rules = [
    "You are a sub-agent: you do one job for another agent, described in the brief (the user's message). You see none of its conversation; the brief has what you need, and the files are in the workspace.",
    '- Do only that job. Nobody reads your questions: decide, and say what you assumed.',
    `- When it is done, or you cannot do it, call ${input.reportTool} once with the status, a short summary and your deliverables.`,
  ].join('\n');
  let left = BRIEF_TOKENS - estimateTokens(message) - estimateTokens(rules);
  const roleBudget = Math.min(SHARES.role, left);
  const role =
    input.definition && roleBudget >= 30 ? clipTokens(input.definition.instructions, roleBudget) : '';
  const instructions = role ? `${rules}\n\n## Your role: ${input.definition!.name}\n${role}` : rules;
  left -= estimateTokens(instructions) - estimateTokens(rules);
  const notesBudget = Math.min(SHARES.notes, left);
  const notes = input.context.notes;
  const context: ProjectContext =
    notes && notesBudget >= 50
      ? { notes: { file: notes.file, text: clipTokens(notes.text, notesBudget) } }
      : {};
  const systemPrompt = buildSystemPrompt({
    workspace: input.workspace,
    context,
    toolsInPrompt: input.toolsInPrompt,
    instructions,
  });
  return { systemPrompt, message };
}

function briefMessage(input: BriefInput): string {
  const { task } = input;
  const lines = [`Objective: ${clipTokens(task.objective, SHARES.objective)}`];
  const { type, path, description } = task.deliverable;
  const what = type === 'file' ? `a file${path ? ` at ${path}` : ''}` : type === 'data' ? 'data' : 'text';
  lines.push(`Deliverable: ${what}${description ? `: ${clipTokens(description, SHARES.deliverable)}` : ''}`);
  if (task.dataHint) lines.push(`Data: ${clipTokens(task.dataHint, SHARES.dataHint)}`);
  const todo = servedTodo(input.parentState);
  if (todo) lines.push(`It serves this item of the parent's todo list: ${clipTokens(todo, SHARES.todo)}`);
  if (input.dependencies.length > 0) {
    const each = Math.max(12, Math.floor(SHARES.dependencies / input.dependencies.length));
    lines.push('Results of the tasks this one builds on:');
    for (const dep of input.dependencies) {
      const files = dep.deliverables.length > 0 ? ` Deliverables: ${dep.deliverables.join(', ')}.` : '';
      lines.push(`- ${dep.taskId} (${dep.status}): ${clipTokens(dep.summary + files, each)}`);
    }
  }
  return lines.join('\n');
}

/** The item the parent is working on: the one in progress, else none (a guess would mislead). */
function servedTodo(state: SessionState): string | undefined {
  return readTodos(state).find((t) => t.status === 'in_progress')?.text;
}

/** The longest start of `text` that fits `tokens` by the estimate, marked where it was cut. */
function clipTokens(text: string, tokens: number): string {
  const trimmed = text.trim();
  if (estimateTokens(trimmed) <= tokens) return trimmed;
  let low = 0;
  let high = trimmed.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimateTokens(trimmed.slice(0, mid)) <= tokens - 2) low = mid;
    else high = mid - 1;
  }
  return `${trimmed.slice(0, low).trimEnd()}…`;
}
