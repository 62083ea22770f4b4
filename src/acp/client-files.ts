import type { AgentContext, ClientCapabilities } from '@agentclientprotocol/sdk';
import type { EditorFiles } from '../tools/types.js';

/**
 * The editor's `fs/read_text_file` and `fs/write_text_file`, where it offers them, as the port the
 * file tools read and write through (tools/types.ts `EditorFiles`): reads see unsaved buffers and
 * writes land in the editor's review. The tools check every path against the workspace and the
 * permission rules before they ask, so the editor is only ever asked about files they may touch.
 * A read the editor cannot answer falls back to the disk.
 */
export function editorFiles(
  client: AgentContext,
  capabilities: ClientCapabilities,
  sessionId: () => string,
): EditorFiles | undefined {
  const { readTextFile, writeTextFile } = capabilities.fs ?? {};
  if (!readTextFile && !writeTextFile) return undefined;
  return {
    read: async (path, signal) => {
      if (!readTextFile) return undefined;
      try {
        const { content } = await client.request(
          'fs/read_text_file',
          { sessionId: sessionId(), path },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        );
        return content;
      } catch {
        return undefined;
      }
    },
    ...(writeTextFile
      ? {
          write: async (path: string, content: string, signal: AbortSignal) => {
            await client.request(
              'fs/write_text_file',
              { sessionId: sessionId(), path, content },
              { cancellationSignal: signal, stopWaitingOnCancel: true },
            );
          },
        }
      : {}),
  };
}
