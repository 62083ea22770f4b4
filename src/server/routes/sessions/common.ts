import { usageJson } from '../../../cluster/wire.js';
import type { SessionRow, SessionSummary } from '../../../store/rows.js';
import { problemResponse } from '../../schemas.js';

export const tags = ['sessions'];
export const notFound = { 404: problemResponse('No such session') };
export const busy = { 409: problemResponse('The session is busy') };

/** What a held session adds to its row: whether it runs, and how much waits. */
interface Activity {
  readonly busy: boolean;
  readonly queued: number;
}

/** A session as the API lists it: agent_computer's fields, then Hearth's. */
export function sessionJson(row: SessionRow, live: Activity | undefined, summary?: SessionSummary) {
  return {
    session_id: row.id,
    id: row.id,
    title: row.title,
    preview: row.title,
    workspace: row.workspace,
    model: row.model,
    status: row.status,
    parent_id: row.parentId,
    created_at: row.createdAt,
    last_activity: row.updatedAt,
    running: live?.busy ?? false,
    queued: live?.queued ?? 0,
    ...(summary
      ? {
          messages: summary.messages,
          turns: summary.turns,
          token_usage: usageJson({ prompt: summary.promptTokens, completion: summary.completionTokens }),
        }
      : {}),
  };
}
