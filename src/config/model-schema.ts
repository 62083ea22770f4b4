/** A model and the servers that run it: the settings a profile or a pool's server carries. */
import { z } from 'zod';

/** `localhost:1234` parses as a URL whose scheme is `localhost`; only http(s) reaches a model server. */
export const serverUrl = z.url({
  protocol: /^https?$/,
  error: 'expected a URL starting with http:// or https://, e.g. http://127.0.0.1:1234/v1',
});

/**
 * A model: a name the server knows, a profile's name, or a GGUF file run in process, written as a
 * path ending in .gguf or as `{file: PATH}` (parsed to the path, so everything after reads a string).
 */
export const modelSetting = z.union([
  z.string().min(1),
  z
    .object({
      file: z.string().refine((path) => /\.gguf$/i.test(path), {
        error: 'expected the path of a GGUF model file, ending in .gguf',
      }),
    })
    .strict()
    .transform((m) => m.file),
]);

/** How much a reasoning model thinks: `off`, or an effort. Unset leaves the server's default. */
export const REASONING_LEVELS = ['off', 'low', 'medium', 'high'] as const;
export type ReasoningLevel = (typeof REASONING_LEVELS)[number];

/** The settings a model profile may carry; each replaces the top-level key of the same name. */
const profileShape = {
  base_url: serverUrl.optional(),
  model: modelSetting,
  api_key: z.string().optional(),
  context_window: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  seed: z.number().int().optional(),
  repetition_penalty: z.number().positive().max(10).optional(),
  max_tokens: z.number().int().positive().optional(),
  native_tools: z.boolean().optional(),
  vision: z.boolean().optional(),
  reasoning: z.enum(REASONING_LEVELS).optional(),
};

/** One server of a pool (`llm.endpoints`); lower `priority` is tried first. */
export const endpointSchema = z
  .object({
    url: serverUrl.describe('OpenAI-compatible base URL, e.g. http://gpu-box:8080/v1'),
    /** The models it serves; unset: whatever it lists. */
    models: z.array(z.string().min(1)).min(1).optional(),
    /** Tier: every server of tier 1 is tried before any of tier 2. */
    priority: z.number().int().min(0).default(1),
    /** Requests it runs at once; more wait for a free place (a llama.cpp server's slots, say). */
    max_concurrent: z.number().int().positive().optional(),
    /** Labels shown by `doctor` and the gateway's status (gpu, vision, ...). */
    tags: z.array(z.string().min(1)).default([]),
    api_key: z.string().optional(),
  })
  .strict();
export type EndpointSettings = z.infer<typeof endpointSchema>;

/** A named model setting, selected with `-m NAME` (or `model: NAME` anywhere a model is set). */
export const profileSchema = z.object(profileShape).strict();
export type Profile = z.infer<typeof profileSchema>;
export const PROFILE_KEYS = Object.keys(profileShape) as Array<keyof Profile>;
