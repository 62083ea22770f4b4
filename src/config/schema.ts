import { z } from 'zod';
import { hooksSchema } from './hooks-schema.js';

const sandboxMode = z.enum(['auto', 'bwrap', 'docker', 'podman', 'seatbelt', 'none']);

/** `localhost:1234` parses as a URL whose scheme is `localhost`; only http(s) reaches a model server. */
const serverUrl = z.url({
  protocol: /^https?$/,
  error: 'expected a URL starting with http:// or https://, e.g. http://127.0.0.1:1234/v1',
});

/** The settings a model profile may carry; each replaces the top-level key of the same name. */
const profileShape = {
  base_url: serverUrl.optional(),
  model: z.string().min(1),
  api_key: z.string().optional(),
  context_window: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  seed: z.number().int().optional(),
  max_tokens: z.number().int().positive().optional(),
  native_tools: z.boolean().optional(),
  vision: z.boolean().optional(),
};

/** A named model setting, selected with `-m NAME` (or `model: NAME` anywhere a model is set). */
const profileSchema = z.object(profileShape).strict();
export type Profile = z.infer<typeof profileSchema>;
export const PROFILE_KEYS = Object.keys(profileShape) as Array<keyof Profile>;

function buildSchema<P extends z.ZodType>(profile: P) {
  return z
    .object({
      base_url: serverUrl.describe('OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1').optional(),
      model: z.string().min(1).optional(),
      api_key: z.string().optional(),
      /** Model turns per run; default 50, or 500 in deep-work mode. */
      max_iterations: z.number().int().positive().optional(),
      /** Seconds for a whole model request; local models may spend minutes on a long prompt. */
      timeout: z.number().positive().default(600),
      /** Seconds of silence allowed between streamed chunks before the server counts as stuck. */
      idle_timeout: z.number().positive().default(180),
      max_retries: z.number().int().min(0).max(20).default(4),
      temperature: z.number().min(0).max(2).optional(),
      /** Nucleus sampling; unset leaves the server's default. */
      top_p: z.number().gt(0).max(1).optional(),
      /** Fixed sampling seed, for reproducible runs where the server honours it. */
      seed: z.number().int().optional(),
      max_tokens: z.number().int().positive().optional(),
      context_window: z.number().int().positive().optional(),
      /**
       * Whether the server returns tool calls natively (`tool_calls`). False: tools are described
       * in the prompt and calls parsed from text. Unset: use native calls, parse text as a fallback.
       */
      native_tools: z.boolean().optional(),
      /** Whether the model accepts images; unset: what the server says, and if it says nothing, try. */
      vision: z.boolean().optional(),
      /** Named model profiles; the one named by `model` (e.g. `-m coder`) is applied over the top level. */
      models: z.record(z.string().min(1), profile).default({}),
      /** Tool groups or names: `enabled` replaces the default set, `disabled` removes from it. */
      tools: z
        .object({ enabled: z.array(z.string()).optional(), disabled: z.array(z.string()).optional() })
        .strict()
        .default({}),
      /** Where commands run: a backend name, or the full settings. */
      sandbox: z
        .union([
          sandboxMode.transform((mode) => ({
            mode,
            network: false as boolean | string[],
            env: [] as string[],
            memory_mb: undefined as number | undefined,
            cpus: undefined as number | undefined,
            max_processes: undefined as number | undefined,
            tmp_mb: undefined as number | undefined,
          })),
          z
            .object({
              mode: sandboxMode.default('auto'),
              /** Outbound network for commands: off by default; true for all; a list of domains for only those (bwrap). */
              network: z.union([z.boolean(), z.array(z.string().min(1))]).default(false),
              /** Extra environment variable names passed into the sandbox (exact, or PREFIX*). */
              env: z.array(z.string()).default([]),
              /** Memory for all of a command's processes (MB); default 2048 where a cgroup can hold it. */
              memory_mb: z.number().int().positive().optional(),
              cpus: z.number().positive().optional(),
              /** Processes and threads one command may have at once; default 1024. */
              max_processes: z.number().int().positive().optional(),
              /** Size of each private temp filesystem (/tmp, /var/tmp, the home), MB; default 512. */
              tmp_mb: z.number().int().positive().optional(),
            })
            .strict(),
        ])
        .default({ mode: 'auto', network: false, env: [] }),
      permissions: z
        .object({
          mode: z.enum(['auto', 'normal', 'manual', 'plan']).default('normal'),
          /**
           * Rules such as "shell(npm test*)", "write_file(src/**)", "*(.env)". Deny wins over allow.
           * Both lists add up across config files, environment and flags rather than replacing.
           */
          allow: z.array(z.string()).default([]),
          deny: z.array(z.string()).default([]),
        })
        .strict()
        .default({ mode: 'normal', allow: [], deny: [] }),
      compaction: z
        .object({
          /** Share of the context window at which older turns are summarized. */
          threshold: z.number().gt(0).max(1).default(0.75),
        })
        .strict()
        .default({ threshold: 0.75 }),
      /** Sub-agents (`delegate`, `decompose`): each a stored session with a brief instead of the history. */
      subagents: z
        .object({
          /** Offer the spawn tools; unset: on in deep-work mode (--deep), off otherwise. */
          enabled: z.boolean().optional(),
          /** How deep sub-agents may nest; at this depth the spawn tools are not offered. */
          max_depth: z.number().int().min(1).max(8).default(3),
          /** Tasks of one decomposition run side by side; a local server usually serves one at a time. */
          parallel: z.number().int().min(1).max(16).default(1),
          /** Model turns one sub-agent may take (a definition's max_turns may only lower it). */
          max_turns: z.number().int().positive().default(30),
          /** Seconds one sub-agent may run before it is stopped and reported failed. */
          time_limit: z.number().positive().default(1800),
          /** Share of its parent's token budget a sub-agent may spend. */
          budget_share: z.number().gt(0).max(1).default(0.25),
        })
        .strict()
        .default({ max_depth: 3, parallel: 1, max_turns: 30, time_limit: 1800, budget_share: 0.25 }),
      /** What web_fetch may reach and how much it reads. */
      web: z
        .object({
          /** Hosts (`intranet.local`, `*.corp.example`), addresses or ranges (`10.0.0.0/8`) that are not public but may be fetched. */
          allow_private: z.array(z.string().min(1)).default([]),
          /** Seconds for one fetch, rendering included. */
          timeout: z.number().positive().default(30),
          /** Most megabytes read from one reply. */
          max_mb: z.number().positive().default(5),
          /** The Chromium or Chrome that renders pages built by JavaScript; false: never render. Unset: look for one. */
          browser: z.union([z.string().min(1), z.literal(false)]).optional(),
        })
        .strict()
        .default({ allow_private: [], timeout: 30, max_mb: 5 }),
      /** Tokens (prompt + completion, over all requests) one run may spend; unset means no limit. */
      token_budget: z.number().int().positive().optional(),
      /**
       * Programs run on the agent's events, in Claude Code's shape (hooks-schema.ts). A security
       * setting: they run on the host, so a project file sets them only once approved.
       */
      hooks: hooksSchema.default({}),
      /** The SQLite file holding sessions; default <hearth home>/hearth.db. */
      db_path: z.string().optional(),
    })
    .strict();
}

/** Everything a user may set in a config file. Keys are snake_case, as in the JSON files. */
export const configSchema = buildSchema(profileSchema);

/**
 * One source on its own (a file, the environment, the flags): every key optional, and a profile
 * may be partial, since another file can complete it (say, a project tuning the user's `coder`).
 */
export const layerSchema = buildSchema(profileSchema.partial()).partial();

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
