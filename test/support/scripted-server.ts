/**
 * The scripted OpenAI-compatible (and Ollama-native) LLM server tests talk to. One concept per file
 * under ./scripted/: turn.ts (what a turn says, `reply()`), openai-wire.ts and ollama-wire.ts (how
 * it goes on the wire), serve-turn.ts (faults, delays, holds), recording.ts (what tests wait on),
 * server.ts (HTTP routes), server-limits.ts (what real servers refuse: a prompt over the window,
 * roles that do not alternate), embeddings.ts.
 */
export { embed } from './scripted/embeddings.js';
export type { RecordedRequest } from './scripted/recording.js';
export {
  type ExtraRoute,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ServedSpan,
  startScriptedServer,
} from './scripted/server.js';
export {
  type ContextLimit,
  type OverflowServer,
  overflowAnswer,
  promptTokens,
} from './scripted/server-limits.js';
export {
  type ContentPart,
  reply,
  type ScriptedToolCall,
  type ScriptedTurn,
  TurnBuilder,
  type TurnInput,
} from './scripted/turn.js';
