import { z } from 'zod';

/** Everything a user may set in a config file. Keys are snake_case, as in the JSON files. */
export const configSchema = z
  .object({
    base_url: z.url().describe('OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1').optional(),
    model: z.string().min(1).optional(),
    api_key: z.string().optional(),
    max_iterations: z.number().int().positive().default(50),
    /** Seconds for a whole model request; local models may spend minutes on a long prompt. */
    timeout: z.number().positive().default(600),
    /** Seconds of silence allowed between streamed chunks before the server counts as stuck. */
    idle_timeout: z.number().positive().default(180),
    max_retries: z.number().int().min(0).max(20).default(4),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().positive().optional(),
    context_window: z.number().int().positive().optional(),
    /** Tool groups or names: `enabled` replaces the default set, `disabled` removes from it. */
    tools: z
      .object({ enabled: z.array(z.string()).optional(), disabled: z.array(z.string()).optional() })
      .strict()
      .default({}),
    /** The SQLite file holding sessions; default <hearth home>/hearth.db. */
    db_path: z.string().optional(),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
