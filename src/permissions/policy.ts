import type { ToolCall } from '../llm/types.js';
import type { AnyTool } from '../tools/types.js';

export type Decision = { allow: true } | { allow: false; reason: string };

/** Decides whether a validated call may run. Asked once per call, before it runs. */
export type PermissionPolicy = (call: ToolCall, tool: AnyTool) => Promise<Decision>;

/** Everything runs (`--yolo`). */
export const allowAll: PermissionPolicy = async () => ({ allow: true });

/**
 * Read-only tools run; tools that change things are declined with a message that tells the
 * model what happened and the user how to allow it.
 */
export const readOnly: PermissionPolicy = async (call, tool) =>
  tool.mutates
    ? {
        allow: false,
        reason: `${call.name} was not run: changes need --yolo (this session allows read-only tools only). Tell the user what you would change instead.`,
      }
    : { allow: true };
