import type { ReasoningLevel } from '../config/model-schema.js';
import type { ServerKind } from './discover.js';
import type { LlmEvent } from './types.js';

/**
 * Thinking on or off, and its effort, in the fields each server understands, read from the
 * session's setting at every request (`/thinking` changes it between two). Only the request's
 * tail changes, never its messages, so the server's prompt cache holds (a template that opens
 * reasoning differently renders only the new generation prompt differently).
 *
 * - llama.cpp: the chat template's kwargs: `enable_thinking` (Qwen3, GLM, DeepSeek, Nemotron) and
 *   `reasoning_effort` (gpt-oss).
 * - vLLM: `chat_template_kwargs` with `enable_thinking` and `thinking` (DeepSeek-V3.1), and
 *   `reasoning_effort` (gpt-oss).
 * - Ollama's `/api/chat`: `think`, a boolean, or a level for gpt-oss (which cannot stop thinking).
 * - LM Studio, Ollama's `/v1` and other OpenAI-compatible servers: `reasoning_effort`, `none` for off.
 *
 * What the server or model cannot do is said once: an embedded model takes no setting; a reply
 * that still reasons with thinking off shows the setting was not understood.
 */
export class ReasoningControl {
  private readonly said = new Set<string>();

  constructor(
    private readonly kind: ServerKind | undefined,
    private readonly model: string,
    private readonly level: () => ReasoningLevel | undefined,
  ) {}

  /** The request fields for the current setting; none when it is unset. */
  fields(): Record<string, unknown> {
    const level = this.level();
    return level === undefined ? {} : reasoningFields(this.kind, this.model, level).fields;
  }

  /** The reply's events, with what this server cannot do said once before its end. */
  async *noted(events: AsyncGenerator<LlmEvent>): AsyncGenerator<LlmEvent> {
    const level = this.level();
    if (level === undefined) return yield* events;
    const before = reasoningFields(this.kind, this.model, level).note;
    if (before && this.once(before)) yield { type: 'warning', message: before };
    let reasoned = false;
    for await (const event of events) {
      if (event.type === 'reasoning_delta' && event.text.trim()) reasoned = true;
      if (event.type === 'done' && level === 'off' && reasoned) {
        const message = `Thinking is off, yet ${this.model} still reasoned: this server (${this.kind ?? 'unknown'}) or model does not take the setting.`;
        if (this.once(message)) yield { type: 'warning', message };
      }
      yield event;
    }
  }

  private once(message: string): boolean {
    if (this.said.has(message)) return false;
    this.said.add(message);
    return true;
  }
}

/** The fields that carry `level` to a server of this kind, and what it cannot do with it. */
function reasoningFields(
  kind: ServerKind | undefined,
  model: string,
  level: ReasoningLevel,
): { fields: Record<string, unknown>; note?: string } {
  const on = level !== 'off';
  const effort = on ? { reasoning_effort: level } : {};
  switch (kind) {
    case 'llamacpp':
      return { fields: { chat_template_kwargs: { enable_thinking: on, ...effort } } };
    case 'vllm':
      return { fields: { chat_template_kwargs: { enable_thinking: on, thinking: on }, ...effort } };
    // mlx_lm.server passes chat_template_kwargs to the chat template; oMLX and mlx-openai-server take it too.
    case 'mlx-lm':
    case 'omlx':
    case 'mlx-openai-server':
      return { fields: { chat_template_kwargs: { enable_thinking: on } } };
    case 'ollama':
      if (/gpt-oss/i.test(model)) {
        return on
          ? { fields: { think: level } }
          : {
              fields: { think: 'low' },
              note: `${model} cannot stop thinking on Ollama: it thinks at low effort.`,
            };
      }
      return level === 'off' || level === 'medium'
        ? { fields: { think: on } }
        : {
            fields: { think: true },
            note: `Ollama takes thinking on or off for ${model}, not an effort: it is on.`,
          };
    case 'embedded':
      return {
        fields: {},
        note: 'A model run in process takes no thinking setting: its own default stands.',
      };
    default:
      return { fields: { reasoning_effort: on ? level : 'none' } };
  }
}
