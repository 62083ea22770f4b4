import Database from 'better-sqlite3';
import type { ChatMessage } from '../../src/llm/types.js';

/** A session row as the `sessions` table holds it. */
export interface PeekedSession {
  id: string;
  title: string;
  workspace: string;
  parentId: string | null;
  status: string;
}

/**
 * Reads a Hearth database straight from the file, bypassing the store module, so tests check what
 * was really committed. Read-only unless `writable` is set (for tests that plant rows).
 */
export class StorePeek {
  readonly db: Database.Database;

  constructor(path: string, opts: { writable?: boolean } = {}) {
    this.db = new Database(path, { readonly: !opts.writable, fileMustExist: true });
  }

  integrity(): string {
    return (this.db.pragma('integrity_check') as Array<{ integrity_check: string }>)
      .map((r) => r.integrity_check)
      .join('\n');
  }

  hasSchema(): boolean {
    return (
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").get() !==
      undefined
    );
  }

  sessions(): PeekedSession[] {
    return this.db
      .prepare(
        'SELECT id, title, workspace, parent_id AS parentId, status FROM sessions ORDER BY created_at, rowid',
      )
      .all() as PeekedSession[];
  }

  /** The session's messages in order, as `SELECT body ... ORDER BY seq` parsed. */
  messages(sessionId: string): ChatMessage[] {
    const rows = this.db
      .prepare('SELECT body FROM messages WHERE session_id = ? ORDER BY seq')
      .all(sessionId) as Array<{ body: string }>;
    return rows.map((r) => JSON.parse(r.body) as ChatMessage);
  }

  seqs(sessionId: string): number[] {
    return (
      this.db.prepare('SELECT seq FROM messages WHERE session_id = ? ORDER BY seq').all(sessionId) as Array<{
        seq: number;
      }>
    ).map((r) => r.seq);
  }

  count(table: 'messages' | 'usage' | 'audit' | 'session_state', sessionId: string): number {
    return (
      this.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE session_id = ?`).get(sessionId) as {
        n: number;
      }
    ).n;
  }

  tokens(sessionId: string): number {
    return (
      this.db
        .prepare(
          'SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS n FROM usage WHERE session_id = ?',
        )
        .get(sessionId) as { n: number }
    ).n;
  }

  close(): void {
    this.db.close();
  }
}

/** Opens, runs `work`, closes: the CLI under test should never wait on our connection. */
export function withPeek<T>(path: string, work: (peek: StorePeek) => T, opts?: { writable?: boolean }): T {
  const peek = new StorePeek(path, opts);
  try {
    return work(peek);
  } finally {
    peek.close();
  }
}

/**
 * Checks the rule OpenAI-compatible servers enforce on a history: each assistant message with tool
 * calls is followed directly by one tool result per call (and no result answers a call not made).
 * Returns the problems found, empty when the history is valid.
 */
export function historyProblems(messages: ChatMessage[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      problems.push(`message ${i}: tool result ${m.tool_call_id} answers no call just before it`);
      continue;
    }
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const open = new Set(m.tool_calls.map((c) => c.id));
    let j = i + 1;
    for (; j < messages.length && messages[j]!.role === 'tool'; j++) {
      const result = messages[j] as Extract<ChatMessage, { role: 'tool' }>;
      if (!open.delete(result.tool_call_id))
        problems.push(`message ${j}: tool result ${result.tool_call_id} answers no open call`);
    }
    if (open.size > 0) problems.push(`message ${i}: calls without a result: ${[...open].join(', ')}`);
    i = j - 1;
  }
  return problems;
}
