import { z } from 'zod';
import { hooksSchema } from './hooks-schema.js';
import { diagnosticsSchema, lspServersSchema } from './lsp-schema.js';
import { mcpServersSchema } from './mcp-servers.js';
import { endpointSchema, modelSetting, profileSchema, REASONING_LEVELS, serverUrl } from './model-schema.js';
import { pipelineSchema } from './pipeline-schema.js';

/** How answers are shaped (agent/output-style.ts). */
export const OUTPUT_STYLES = ['terse', 'narrative', 'json'] as const;

const sandboxMode = z.enum(['auto', 'bwrap', 'docker', 'podman', 'seatbelt', 'none']);

/** An origin as browsers send it: scheme, host and port, nothing after. */
const origin = z
  .url({ protocol: /^https?$/, error: 'expected an origin such as https://example.com:8443' })
  .refine((text) => new URL(text).origin === text.replace(/\/$/, ''), {
    error: 'expected an origin only (scheme://host[:port]), with no path, query or trailing slash',
  });

const GATEWAY_DEFAULTS = {
  host: '127.0.0.1',
  port: 8000,
  pin: false,
  origins: [] as string[],
  hosts: [] as string[],
  approval_timeout: 300,
  turns: 'here' as 'here' | 'workers',
  turn_tags: [] as string[],
};

const gatewaySchema = z
  .object({
    /** The address to bind; anything but loopback needs `token` or `pin`. */
    host: z.string().min(1).default(GATEWAY_DEFAULTS.host),
    port: z.number().int().min(0).max(65535).default(GATEWAY_DEFAULTS.port),
    /** The bearer token clients send; unset, one is made at start and kept in <hearth home>/gateway.json. */
    token: z.string().min(16).optional(),
    /** Print a one-time PIN at start that a browser or phone exchanges for a session cookie. */
    pin: z.boolean().default(GATEWAY_DEFAULTS.pin),
    /** Origins allowed to call the API from a browser (CORS); none by default. */
    origins: z.array(origin).default(GATEWAY_DEFAULTS.origins),
    /** Extra names clients may reach the gateway by (a reverse proxy, a DNS name), beyond its addresses. */
    hosts: z.array(z.string().min(1)).default(GATEWAY_DEFAULTS.hosts),
    /** Seconds a call waits for a client's approval before it is declined. */
    approval_timeout: z.number().positive().default(GATEWAY_DEFAULTS.approval_timeout),
    /**
     * Where sessions' turns run: in this process (`here`), or queued to `hearth worker`s on any
     * machine that reaches the shared database (`workers`; needs `storage: postgres://...`).
     */
    turns: z.enum(['here', 'workers']).default(GATEWAY_DEFAULTS.turns),
    /** With `turns: workers`: only workers with all of these tags take them (`hearth worker --tags`). */
    turn_tags: z.array(z.string().min(1)).default(GATEWAY_DEFAULTS.turn_tags),
  })
  .strict()
  .default(GATEWAY_DEFAULTS);

function buildSchema<P extends z.ZodType>(profile: P) {
  return z
    .object({
      base_url: serverUrl.describe('OpenAI-compatible base URL, e.g. http://127.0.0.1:1234/v1').optional(),
      model: modelSetting.optional(),
      api_key: z.string().optional(),
      /** Model turns per run; default 50, or 500 in deep-work mode. */
      max_iterations: z.number().int().positive().optional(),
      /** Seconds for a whole model request; local models may spend minutes on a long prompt. */
      timeout: z.number().positive().default(600),
      /** Seconds of silence allowed between streamed chunks before the server counts as stuck. */
      idle_timeout: z.number().positive().default(180),
      /** Seconds to wait for a reply's first chunk while the server reads the prompt; unset: `timeout`. */
      first_byte_timeout: z.number().positive().optional(),
      max_retries: z.number().int().min(0).max(20).default(4),
      temperature: z.number().min(0).max(2).optional(),
      /** Nucleus sampling; unset leaves the server's default. */
      top_p: z.number().gt(0).max(1).optional(),
      /** Fixed sampling seed, for reproducible runs where the server honours it (`--seed`). */
      seed: z.number().int().optional(),
      /**
       * Penalty on repeated tokens (1 = none; 1.1 is a common cure for loops), sent as each server
       * names it (`--repetition-penalty`); unset leaves the server's default.
       */
      repetition_penalty: z.number().positive().max(10).optional(),
      max_tokens: z.number().int().positive().optional(),
      context_window: z.number().int().positive().optional(),
      /**
       * Whether the server returns tool calls natively (`tool_calls`). False: tools are described
       * in the prompt and calls parsed from text. Unset: use native calls, parse text as a fallback.
       */
      native_tools: z.boolean().optional(),
      /** Whether the model accepts images; unset: what the server says, and if it says nothing, try. */
      vision: z.boolean().optional(),
      /**
       * Thinking off, or its effort, sent as each server understands it (`--thinking`, `/thinking`);
       * unset leaves the server's and the model's default.
       */
      reasoning: z.enum(REASONING_LEVELS).optional(),
      /** How answers are shaped (`--output-style`): terse, narrative, or json (a result object ends a one-shot run). */
      output_style: z.enum(OUTPUT_STYLES).optional(),
      /**
       * A pool of model servers used instead of one `base_url` (which, when set, wins): each session
       * keeps one server while it is healthy and moves on connection errors, 5xx or overload.
       */
      llm: z
        .object({ endpoints: z.array(endpointSchema).default([]) })
        .strict()
        .default({ endpoints: [] }),
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
            max_write_mb: undefined as number | undefined,
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
              /** Processes and threads one command may have at once; default 512. */
              max_processes: z.number().int().positive().optional(),
              /** Size of each private temp filesystem (/tmp, /var/tmp, the home), MB; default 512. */
              tmp_mb: z.number().int().positive().optional(),
              /** How much one command may grow the workspace's disk, MB; past it it is stopped. Default 4096. */
              max_write_mb: z.number().int().positive().optional(),
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
          /** Each sub-agent in a git worktree of its own, unless its call says `worktree: false`. */
          worktrees: z.boolean().default(false),
        })
        .strict()
        .default({
          max_depth: 3,
          parallel: 1,
          max_turns: 30,
          time_limit: 1800,
          budget_share: 0.25,
          worktrees: false,
        }),
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
          /** Where web_search asks; unset, there is no web_search. */
          search: z
            .object({
              /** A SearXNG instance with the JSON format on, e.g. http://127.0.0.1:8888. */
              searxng_url: z
                .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:8888' })
                .optional(),
            })
            .strict()
            .optional(),
        })
        .strict()
        .default({ allow_private: [], timeout: 30, max_mb: 5 }),
      /** Long-term memory (src/memory/): what is remembered, how it is searched, when sessions are reflected on. */
      memory: z
        .object({
          /** Off: no memory block, no memory tool, no reflection. */
          enabled: z.boolean().default(true),
          /** The embeddings model on the same server; unset: the one the server lists, else keywords only. */
          embedding_model: z.string().min(1).optional(),
          /** Tokens the memory block at the start of a new session may take. */
          budget: z.number().int().min(0).default(800),
          /**
           * When finished sessions are reflected on (an extra model call): `interactive` after a REPL
           * session and, in the background, gateway sessions gone idle and scheduler and worker runs
           * once they end; `always` also after one-shot runs; `off` only with `hearth memory reflect`.
           */
          reflect: z.enum(['off', 'interactive', 'always']).default('interactive'),
          /** Minutes a gateway session stays idle before its new messages are reflected on. */
          reflect_idle_minutes: z.number().positive().default(10),
          /** Store what reflection proposes without review. A security setting (config/security.ts). */
          auto_accept: z.boolean().default(false),
        })
        .strict()
        .default({
          enabled: true,
          budget: 800,
          reflect: 'interactive',
          reflect_idle_minutes: 10,
          auto_accept: false,
        }),
      /** The plan pipeline (`hearth plan add`, `hearth pipeline run`): planner, coder, verifier, reviewer. */
      pipeline: pipelineSchema,
      /** Snapshots of the workspace before each turn's changes, for `hearth rewind` and `hearth undo` (src/checkpoints/). */
      checkpoints: z
        .object({
          enabled: z.boolean().default(true),
          /** Files larger than this (MB) are not kept; each snapshot names them. */
          max_file_mb: z.number().positive().default(10),
          /** A workspace with more files than this (not ignored) gets no snapshot. */
          max_files: z.number().int().positive().default(50_000),
          /** Checkpoints kept per workspace (turns and rewinds); older ones are pruned. */
          keep: z.number().int().positive().default(200),
          /** Disk the workspace's checkpoints may take (MB); past it the oldest are pruned. */
          max_store_mb: z.number().positive().default(1024),
        })
        .strict()
        .default({ enabled: true, max_file_mb: 10, max_files: 50_000, keep: 200, max_store_mb: 1024 }),
      /**
       * OpenTelemetry traces in the GenAI conventions (setup/telemetry.ts), sent to this OTLP/HTTP
       * endpoint (its base URL: /v1/traces is added); unset: OTEL_EXPORTER_OTLP_ENDPOINT, else none.
       * A security setting: spans say what the agent does, so a project file cannot send them away.
       */
      telemetry: z.object({ otlp_endpoint: z.string().url().optional() }).strict().default({}),
      /** Tokens (prompt + completion, over all requests) one run may spend; unset means no limit. */
      token_budget: z.number().int().positive().optional(),
      /** The share of `token_budget` spent at which the user and the model are told to wrap up (default 0.8). */
      token_budget_warning: z.number().gt(0).lt(1).optional(),
      /** MCP tool servers (the servers themselves also come from mcp.json files: config/mcp-servers.ts). */
      mcp: z
        .object({
          servers: mcpServersSchema.default({}),
          /** Above this share of the context window, MCP tools wait behind the tool_search index. */
          max_schema_share: z.number().min(0).max(1).default(0.1),
          /**
           * Seconds a search or call waits for a server to start and list its tools. A slower start
           * (a first `npx -y` downloading the server) goes on, and a later search or call finds it.
           */
          startup_timeout: z.number().positive().default(30),
          /** Seconds one MCP tool call may take. */
          timeout: z.number().positive().default(120),
        })
        .strict()
        .default({ servers: {}, max_schema_share: 0.1, startup_timeout: 30, timeout: 120 }),
      /**
       * Programs run on the agent's events, in Claude Code's shape (hooks-schema.ts). A security
       * setting: they run on the host, so a project file sets them only once approved.
       */
      hooks: hooksSchema.default({}),
      /**
       * The PostgreSQL database several machines share (postgres://...): the queue `hearth worker`
       * runs tasks from, and long-term memory. A security setting: it decides where tasks come from,
       * where results go and what memories sessions start with.
       */
      storage: z
        .url({
          protocol: /^postgres(ql)?$/,
          error: 'expected a URL such as postgres://user@host:5432/hearth',
        })
        .optional(),
      /** The scheduler (`hearth scheduler`, `hearth serve`). */
      scheduler: z
        .object({
          /**
           * Where scheduled runs go when a job does not say (its `run_on`; a job with `tags` goes to
           * the queue): `here`, in the scheduler's process, or `queue`, to a `hearth worker` through
           * the shared database (`storage`). A security setting: see security.ts.
           */
          run_on: z.enum(['here', 'queue']).default('here'),
        })
        .strict()
        .default({ run_on: 'here' }),
      /** The SQLite file holding sessions; default <hearth home>/hearth.db. */
      db_path: z.string().optional(),
      /** `hearth serve`: where it listens and who may use it (security settings, see security.ts). */
      gateway: gatewaySchema,
      /** Language servers of the user's own, beside the built-in ones (lsp-schema.ts). */
      lsp: lspServersSchema.default({}),
      /** What is said after edits about the errors they brought (lsp-schema.ts). */
      diagnostics: diagnosticsSchema,
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
