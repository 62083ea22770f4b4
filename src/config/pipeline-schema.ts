/** The plan pipeline's settings (`pipeline` in a config file): its commands, rework, roles, model swaps and leases. */
import { z } from 'zod';
import { serverUrl } from './model-schema.js';

const pipelineRole = z
  .object({
    model: z.string().min(1).optional(),
    base_url: serverUrl.optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    seed: z.number().int().optional(),
  })
  .strict();
export type PipelineRole = z.infer<typeof pipelineRole>;

const pipelineSwap = z
  .object({
    /** auto: with LM Studio, load each role's model before its phase and unload the others; off: never. */
    mode: z.enum(['auto', 'off']).default('auto'),
    /** GB available to wait for after unloading; unset: the next model's size, at most half the memory. */
    min_free_gb: z.number().min(0).optional(),
    /** Seconds to wait for that memory before the run stops with an error. */
    memory_timeout: z.number().positive().default(300),
    /** Seconds one model load may take. */
    load_timeout: z.number().positive().default(900),
  })
  .strict();
const SWAP_DEFAULTS = { mode: 'auto' as const, memory_timeout: 300, load_timeout: 900 };
export type PipelineSwap = z.infer<typeof pipelineSwap>;

/** The plan pipeline (`hearth plan add`, `hearth pipeline run`): planner, coder, verifier, reviewer. */
export const pipelineSchema = z
  .object({
    /** Build, test and lint commands the verifier runs in the sandbox after each task. */
    commands: z.array(z.string().min(1)).default([]),
    /** Seconds each of those commands may run. */
    command_timeout: z.number().positive().default(600),
    /** Rework rounds the reviewer may ask for; after them minor findings become debt. */
    max_rework: z.number().int().min(0).max(20).default(3),
    /**
     * The quality gate on what the coder wrote (placeholders, `pass`-only bodies, NotImplementedError,
     * stubs returning constants, commented-out code): `block` sends a placeholder back to the coder,
     * `warn` puts the findings in the review and the report, `off` skips it.
     */
    quality_gate_mode: z.enum(['off', 'warn', 'block']).default('warn'),
    /** One commit per finished task when the workspace is a git repository. */
    git: z.boolean().default(true),
    /**
     * The coder's permission mode (unset: `permissions.mode`). Nobody answers approval questions
     * during a pipeline run, so what the mode would ask about is declined: `auto` lets the coder
     * write and run commands in the sandbox. `hearth pipeline run --yolo` sets it for one run.
     */
    permission_mode: z.enum(['auto', 'normal', 'manual', 'plan']).optional(),
    /** Per-role model, server and sampling; unset keys come from the main settings. */
    roles: z
      .object({ planner: pipelineRole, coder: pipelineRole, reviewer: pipelineRole })
      .partial()
      .strict()
      .default({}),
    /** Coder rounds run before their reviews, then as many reviews (1 alternates): fewer model swaps. */
    batch: z.number().int().min(1).max(100).default(4),
    /** With LM Studio, one role model in memory at a time (`pipeline/model-swap.ts`). */
    swap: pipelineSwap.default(SWAP_DEFAULTS),
    /**
     * With `storage` (PostgreSQL): seconds a worker's claim on a task (and on the workspace)
     * lasts without renewal; a worker silent that long counts as dead and another takes over.
     */
    lease: z.number().min(1).max(3600).default(60),
    /**
     * Tokens of the coder's file context: the workspace's files ranked for the task (words, and
     * embeddings and memories where there are), listed in its first message; 0: none.
     */
    file_context: z.number().int().min(0).max(2000).default(150),
    /** The project's state in `.hearth/PROJECT.md` and a lab notebook in `.hearth/notebook.md`, kept by each run. */
    project_state: z.boolean().default(true),
    /** LAO's analyst: before planning, findings on the repository for the plan (with the planner's model). */
    analyst: z.boolean().default(false),
  })
  .strict()
  .default({
    commands: [],
    command_timeout: 600,
    max_rework: 3,
    quality_gate_mode: 'warn',
    git: true,
    roles: {},
    batch: 4,
    swap: SWAP_DEFAULTS,
    lease: 60,
    file_context: 150,
    project_state: true,
    analyst: false,
  });
