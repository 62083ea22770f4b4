import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatMessage } from '../llm/types.js';

/**
 * The conversation as a JSONL transcript in Claude Code's layout (one entry per line, `type` user
 * or assistant, the message in `message` with content blocks: text, tool_use, tool_result), for
 * hook scripts that read `transcript_path` (a Stop hook looking at the last answer, say). Hearth
 * keeps sessions in SQLite; this file is written only when a hook is about to run, outside the
 * workspace, and replaced each time.
 */
export async function writeTranscript(
  dir: string,
  sessionId: string,
  messages: readonly ChatMessage[],
): Promise<string> {
  const file = path.join(dir, `${sessionId}.jsonl`);
  const lines = messages.flatMap((message) => {
    const entry = transcriptEntry(message, sessionId);
    return entry ? [JSON.stringify(entry)] : [];
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Written aside and renamed: sub-agents side by side may write their parent's at the same time.
  const aside = `${file}.${randomUUID()}.tmp`;
  await writeFile(aside, lines.length > 0 ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
  await rename(aside, file);
  return file;
}

function transcriptEntry(message: ChatMessage, sessionId: string): Record<string, unknown> | undefined {
  switch (message.role) {
    case 'system':
      return undefined;
    case 'user':
      return { type: 'user', sessionId, message: { role: 'user', content: message.content } };
    case 'tool':
      return {
        type: 'user',
        sessionId,
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }],
        },
      };
    case 'assistant': {
      const content: Record<string, unknown>[] = [];
      if (message.content) content.push({ type: 'text', text: message.content });
      for (const call of message.tool_calls ?? []) {
        content.push({
          type: 'tool_use',
          id: call.id,
          name: call.function.name,
          input: parseInput(call.function.arguments),
        });
      }
      return { type: 'assistant', sessionId, message: { role: 'assistant', content } };
    }
  }
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
