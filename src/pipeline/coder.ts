import type { AgentSession } from '../agent/session.js';
import type { TaskRow } from './types.js';

/** Makes the coder's sessions: a normal Hearth agent session per task, resumed for its rework. */
export interface CoderSessions {
  create(title: string): Promise<AgentSession>;
  /**
   * The task's session, or undefined where this machine cannot find it: with sessions in each
   * machine's own database, a task may move to another machine's worker (PostgreSQL plan store).
   */
  open(id: string): Promise<AgentSession | undefined>;
  /** The session's durable state value (its todo list). */
  state(id: string, key: string): Promise<unknown>;
}

/**
 * How a coder round ended. `declined`: its calls that asked for approval, each as the question
 * would have shown it; unattended, every one of them was declined (`unattended.ts`).
 */
export type CoderResult = (
  | {
      ok: true;
      sessionId: string;
      summary: string;
      todos: Array<{ text: string; status: string }>;
      tokens: number;
    }
  | { ok: false; sessionId: string; error: string; tokens: number }
) & { declined: string[] };

/**
 * Runs the coder on a task: its first round gets the brief (task, acceptance, what its
 * prerequisites did); a later round continues the same session with the findings, so the history
 * stays append-only and the server's prompt cache holds.
 */
export async function runCoder(
  sessions: CoderSessions,
  task: TaskRow,
  prerequisites: TaskRow[],
  signal?: AbortSignal,
  /** The files ranked for the task (file-context.ts), for a first round. */
  context?: string,
): Promise<CoderResult> {
  const earlier = task.sessionId ? await sessions.open(task.sessionId) : undefined;
  const session = earlier ?? (await sessions.create(`task #${task.seq}: ${task.title}`));
  // A session begun elsewhere starts over here from the brief, with the findings it was sent back for.
  const message = earlier
    ? (task.feedback ?? 'Your previous run was interrupted. Check what is done and finish the task.')
    : [
        brief(task, prerequisites, context),
        task.feedback ? `Findings on earlier work:\n${task.feedback}` : '',
      ]
        .filter(Boolean)
        .join('\n\n');
  let tokens = 0;
  let end: { reason: string; text: string } | undefined;
  const declined = new Set<string>();
  try {
    for await (const event of session.run(message, signal)) {
      if (event.type === 'usage') tokens += event.prompt + event.completion;
      if (event.type === 'approval_request') declined.add(event.summary);
      if (event.type === 'done') end = event;
    }
  } finally {
    await session.close();
  }
  if (end?.reason !== 'completed') {
    return {
      ok: false,
      sessionId: session.id,
      error: `the coder stopped: ${end?.reason ?? 'no end'}`,
      tokens,
      declined: [...declined],
    };
  }
  const todos = session.journal.state.get('todos');
  return {
    ok: true,
    sessionId: session.id,
    summary: end.text.slice(0, 2000),
    todos: Array.isArray(todos) ? (todos as Array<{ text: string; status: string }>) : [],
    tokens,
    declined: [...declined],
  };
}

function brief(task: TaskRow, prerequisites: TaskRow[], context?: string): string {
  return [
    `Task #${task.seq}: ${task.title}`,
    task.description,
    task.files.length ? `Files: ${task.files.join(', ')}` : '',
    task.acceptance.length ? `Acceptance criteria:\n${task.acceptance.map((a) => `- ${a}`).join('\n')}` : '',
    prerequisites.length
      ? `Done before this task:\n${prerequisites.map((p) => `- #${p.seq} ${p.title}${p.summary ? `: ${p.summary.slice(0, 300)}` : ''}`).join('\n')}`
      : '',
    context ? `Files likely relevant, best first:\n${context}` : '',
    'Do only this task. Create or change the files it names; when it is done, say in one or two sentences what you did.',
  ]
    .filter(Boolean)
    .join('\n\n');
}
