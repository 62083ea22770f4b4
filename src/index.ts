/**
 * Hearth's library API: `new Agent({...})` runs tasks, `defineTool` adds tools. The lower parts
 * (the loop, the client, the registry) are exported too, for callers who assemble their own.
 */

/** The zod Hearth validates tool parameters with: schemas built with it are sure to match. */
export { z } from 'zod';
export type { AgentEvent, DoneEvent, StopReason, ToolResultEvent } from './agent/events.js';
export { type RunAgentOptions, runAgent } from './agent/loop.js';
export { buildSystemPrompt } from './agent/system-prompt.js';
export type { TurnInfo } from './checkpoints/rewind.js';
export type { RewindPlan } from './checkpoints/store.js';
export { ConfigError } from './config/load.js';
export { type ChatRequest, createLlmClient, type LlmClient, type LlmClientOptions } from './llm/client.js';
export { ConnectionError } from './llm/connection.js';
export { discoverServer, listModels } from './llm/discover.js';
export type { ChatMessage, LlmEvent, ToolCall } from './llm/types.js';
export {
  type ApprovalAnswer,
  type ApprovalRequest,
  type Approver,
  PermissionGate,
} from './permissions/gate.js';
export type { PermissionMode } from './permissions/modes.js';
export { parseRule, type Rule, RuleSyntaxError } from './permissions/rules.js';
export { SandboxError, type SandboxMode } from './sandbox/types.js';
export { JobDefinitionError, SchedulerError } from './scheduler/errors.js';
export type { Runner, RunRequest, SchedulerEvent } from './scheduler/scheduler.js';
export { type JobView, SchedulerService, type SchedulerServiceOptions } from './scheduler/service.js';
export {
  Agent,
  AgentError,
  type AgentOptions,
  type AgentResult,
  type AgentSandboxOptions,
  type AgentToolCall,
  type ApprovalCallback,
  type McpServerOptions,
  type ResumeDecisions,
  type RunOptions,
} from './setup/agent.js';
export type { RunOutcome, RunRow } from './store/rows.js';
export { SessionNotFoundError } from './store/rows.js';
export { StoreError } from './store/sqlite/database.js';
export { defaultTools, selectTools, ToolSelectionError, toolGroups } from './tools/catalog.js';
export { ToolRegistry, type ToolResult } from './tools/registry.js';
export {
  type AnyTool,
  defineTool,
  type Tool,
  type ToolContext,
  ToolError,
  type ToolOutput,
} from './tools/types.js';
