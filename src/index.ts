/** Hearth's library API. The full `Agent` class arrives with the library issue; these are its parts. */
export type { AgentEvent, StopReason } from './agent/events.js';
export { type RunAgentOptions, runAgent } from './agent/loop.js';
export { buildSystemPrompt } from './agent/system-prompt.js';
export { type ChatRequest, createLlmClient, type LlmClient, type LlmClientOptions } from './llm/client.js';
export { discoverServer, listModels } from './llm/discover.js';
export type { ChatMessage, LlmEvent, ToolCall } from './llm/types.js';
export {
  type ApprovalAnswer,
  type ApprovalRequest,
  type Approver,
  PermissionGate,
} from './permissions/gate.js';
export type { PermissionMode } from './permissions/modes.js';
export { parseRule, type Rule } from './permissions/rules.js';
export { defaultTools, selectTools, toolGroups } from './tools/catalog.js';
export { ToolRegistry, type ToolResult } from './tools/registry.js';
export { defineTool, type Tool, type ToolContext, ToolError, type ToolOutput } from './tools/types.js';
