import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { askJson, type JsonAnswer, type RoleClient } from './llm-call.js';
import { findingLine } from './quality-gate.js';
import { type Finding, type TaskRow, type Verdict, verdictSchema } from './types.js';

const REVIEWER_PROMPT = `You review one small coding task. Judge only whether the files meet the task and its acceptance criteria.
Reply with JSON only: {"verdict": "approve" | "rework" | "fail", "findings": [{"severity": "critical" | "major" | "minor", "message": str, "file": str}], "summary": str}.
Use "fail" only when the task cannot be done as stated.`;

/** Each file shown to the reviewer is cut to this many characters (a small model's window is small). */
const FILE_CHARS = 6000;

/** One request returning the reviewer's verdict on a task the verifier passed. */
export async function reviewTask(
  role: RoleClient,
  workspace: string,
  task: TaskRow,
  signal?: AbortSignal,
  quality: Finding[] = [],
): Promise<JsonAnswer<Verdict>> {
  const files = await Promise.all(task.files.map((f) => showFile(workspace, f)));
  const content = [
    `Task #${task.seq}: ${task.title}`,
    task.description,
    task.acceptance.length ? `Acceptance:\n${task.acceptance.map((a) => `- ${a}`).join('\n')}` : '',
    task.summary ? `The coder says: ${task.summary}` : '',
    quality.length
      ? `The quality gate warns (weigh these in your findings):\n${quality.map((f) => `- ${findingLine(f)}`).join('\n')}`
      : '',
    ...files,
  ]
    .filter(Boolean)
    .join('\n\n');
  return askJson(role, {
    name: 'verdict',
    schema: verdictSchema,
    messages: [
      { role: 'system', content: REVIEWER_PROMPT },
      { role: 'user', content },
    ],
    signal,
  });
}

async function showFile(workspace: string, file: string): Promise<string> {
  try {
    const text = await readFile(path.resolve(workspace, file), 'utf8');
    const shown =
      text.length > FILE_CHARS
        ? `${text.slice(0, FILE_CHARS)}\n[... ${text.length - FILE_CHARS} more characters]`
        : text;
    return `File ${file}:\n\`\`\`\n${shown}\n\`\`\``;
  } catch {
    return `File ${file}: (cannot be read)`;
  }
}
