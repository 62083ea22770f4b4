/**
 * What real model servers refuse, and the bodies they refuse it with, for the scripted server:
 * a prompt longer than the server's context window, and a history whose roles do not alternate
 * (chat templates that demand it). Each body is the one its server's source writes, cited beside it.
 */

/** Servers whose context-exceeded answer the scripted server can give. */
export type OverflowServer = 'llamacpp' | 'vllm' | 'ollama' | 'ollama-llama-server' | 'lmstudio';

/** A window the scripted server enforces: requests over `tokens` are refused as `server` refuses them. */
export interface ContextLimit {
  tokens: number;
  server: OverflowServer;
}

/**
 * The prompt's size as the scripted server counts it: a quarter of the request body's characters
 * (tool schemas and the history, as a real server's template renders them), rounded up.
 */
export function promptTokens(raw: string): number {
  return Math.ceil(raw.length / 4);
}

/** The status and body `server` answers a prompt of `prompt` tokens with, over a window of `window`. */
export function overflowAnswer(
  server: OverflowServer,
  prompt: number,
  window: number,
  dialect: 'openai' | 'ollama',
): { status: number; json: unknown } {
  switch (server) {
    case 'llamacpp':
      // ggml-org/llama.cpp tools/server/server-context.cpp: send_error(slot, "request (%d tokens)
      // exceeds the available context size (%d tokens), try increasing it",
      // ERROR_TYPE_EXCEED_CONTEXT_SIZE); server-common.cpp format_error_response gives that type
      // code 400 and "exceed_context_size_error"; server-task.cpp server_task_result_error::to_json
      // adds n_prompt_tokens and n_ctx.
      return { status: 400, json: llamaServerError(prompt, window) };
    case 'vllm':
      // vllm/entrypoints/openai/serving_engine.py _validate_input raises this ValueError;
      // serving_chat.py create_chat_completion answers it with create_error_response(f"{e}
      // {e.__cause__}") (hence the trailing "None"): ErrorResponse{error: ErrorInfo}, 400.
      return {
        status: 400,
        json: {
          error: {
            message: `This model's maximum context length is ${window} tokens. However, your request has ${prompt} input tokens. Please reduce the length of the input messages. None`,
            type: 'BadRequestError',
            param: null,
            code: 400,
          },
        },
      };
    case 'ollama': {
      // ollama/ollama llm/llama_server.go completionPromptForRequest: api.StatusError{StatusCode:
      // 400, ErrorMessage: "the prompt is longer than ..."}; /api/chat writes {"error": message},
      // the OpenAI-compatible /v1 its error object (openai/openai.go NewError).
      const message =
        'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length';
      return {
        status: 400,
        json:
          dialect === 'ollama'
            ? { error: message }
            : { error: { message, type: 'invalid_request_error', param: null, code: null } },
      };
    }
    case 'ollama-llama-server':
      // Ollama builds that run llama-server pass its error body on as the string in their own
      // (recorded from Ollama 0.34 and 0.40 with truncate: false, in public client tests).
      return { status: 400, json: { error: JSON.stringify(llamaServerError(prompt, window)) } };
    case 'lmstudio':
      // LM Studio 0.3 (closed source), as users report it: lmstudio-ai/lmstudio-bug-tracker#546 and
      // #237 (LM Studio 0.3.13), cline/cline#3664 (0.3.15).
      return {
        status: 400,
        json: {
          error: `Trying to keep the first ${prompt} tokens when context the overflows. However, the model is loaded with context length of only ${window} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
        },
      };
  }
}

function llamaServerError(prompt: number, window: number) {
  return {
    error: {
      code: 400,
      message: `request (${prompt} tokens) exceeds the available context size (${window} tokens), try increasing it`,
      type: 'exceed_context_size_error',
      n_prompt_tokens: prompt,
      n_ctx: window,
    },
  };
}

/**
 * Mistral-7B-Instruct-v0.3's chat template (mistralai on Hugging Face) raises this when, past the
 * system message and leaving out tool results and assistant tool-call turns, user and assistant do
 * not take turns starting with the user; Gemma's template raises the same rule without the prefix.
 */
const ALTERNATION_MESSAGE =
  'After the optional system message, conversation roles must alternate user/assistant/user/assistant/...';

interface WireMessage {
  role?: unknown;
  tool_calls?: unknown;
}

/** vLLM's answer (serving_chat.py, a jinja2 TemplateError) when the roles break the rule above; else undefined. */
export function alternationAnswer(body: unknown): { status: number; json: unknown } | undefined {
  const messages = (body as { messages?: WireMessage[] } | undefined)?.messages ?? [];
  const turns = messages.filter(
    (m) =>
      (m.role === 'user' || m.role === 'assistant') &&
      !(Array.isArray(m.tool_calls) && m.tool_calls.length > 0),
  );
  const alternates = turns.every((m, i) => m.role === (i % 2 === 0 ? 'user' : 'assistant'));
  if (alternates) return undefined;
  return {
    status: 400,
    json: {
      error: { message: `${ALTERNATION_MESSAGE} None`, type: 'BadRequestError', param: null, code: 400 },
    },
  };
}
