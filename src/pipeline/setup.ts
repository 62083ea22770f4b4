import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Runtime } from '../agent/runtime.js';
import { AgentSession } from '../agent/session.js';
import { sessionDeps } from '../agent/session-setup.js';
import { hearthHome } from '../config/load.js';
import type { PipelineRole } from '../config/pipeline-schema.js';
import { type Connection, createClient, resolveConnection } from '../llm/connection.js';
import { SessionNotFoundError } from '../store/rows.js';
import { processOwner } from '../util/process-identity.js';
import { partCharsFor } from './chunked-plan.js';
import { DEFAULT_LIMITS } from './convergence.js';
import { openFileContext } from './file-context.js';
import { createGitTrace } from './git-trace.js';
import { JOURNAL_KEEP, journalWriter, whilePaused } from './journal.js';
import type { RoleClient } from './llm-call.js';
import { createPlanInbox } from './plan-inbox.js';
import { projectRecorder } from './project-state.js';
import { pipelineStorage } from './storage.js';
import { setUpSwaps } from './swap-setup.js';
import type { PipelineEvent } from './types.js';
import { coderMode, declineUnattended, unattendedNote } from './unattended.js';
import { type PipelineDeps, type RunSummary, runPipeline } from './worker.js';

/** A run's deps, and what the caller does once the run ended: wait for the journal, close the store. */
export type PipelineRun = PipelineDeps & { close(): Promise<void> };

/**
 * The pipeline of a runtime: its store (the session database, or the shared one of `storage`),
 * sandbox and tools, with each role's model from `pipeline.roles`. Every event is shown and
 * recorded in the journal in order, and the workspace's pause flag is honoured. Problems writing
 * the journal go to `onProblem`.
 */
export async function pipelineDeps(
  runtime: Runtime,
  connection: Connection,
  show: (event: PipelineEvent) => void,
  signal?: AbortSignal,
  onProblem: (message: string) => void = () => {},
): Promise<PipelineRun> {
  const { config, workspace } = runtime;
  const settings = config.pipeline;
  const { sandbox } = await runtime.sandbox();
  const store = await runtime.sessions();
  const urlOf = (role: PipelineRole | undefined) => role?.base_url ?? connection.baseUrl;
  const modelOf = (role: PipelineRole | undefined) => role?.model ?? connection.model;
  const { roles } = settings;
  // Said once the journal is open, below.
  const notes: string[] = [];
  const swaps = await setUpSwaps({
    roles: {
      planner: { model: modelOf(roles.planner), baseUrl: urlOf(roles.planner) },
      coder: { model: modelOf(roles.coder), baseUrl: urlOf(roles.coder) },
      reviewer: { model: modelOf(roles.reviewer), baseUrl: urlOf(roles.reviewer) },
    },
    main: { baseUrl: connection.baseUrl, kind: connection.kind, pooled: connection.pool !== undefined },
    settings: settings.swap,
    ...(config.api_key ? { apiKey: config.api_key } : {}),
    note: (message) => notes.push(message),
  });
  const client = (role: PipelineRole | undefined) =>
    swaps.wrap(
      createClient(
        { ...connection, baseUrl: urlOf(role), model: modelOf(role) },
        {
          ...config,
          temperature: role?.temperature ?? config.temperature,
          top_p: role?.top_p ?? config.top_p,
          seed: role?.seed ?? config.seed,
        },
      ),
    );
  const role = (r: PipelineRole | undefined): RoleClient => ({ llm: client(r), jsonSchema: true });
  // The coder's sessions are the runtime's own (hooks, memory, sub-agents), with the coder's model
  // and permission mode (the gate after the sandbox choice above, whose restriction it carries).
  const mode = coderMode(config);
  const coderDeps = await sessionDeps({
    runtime,
    connection,
    ...(mode === runtime.gate.mode ? {} : { gate: runtime.gate.withMode(mode) }),
    approve: declineUnattended,
    deepWork: false,
    llm: client(settings.roles.coder),
  });
  const git =
    settings.git && existsSync(path.join(workspace, '.git')) ? createGitTrace(workspace, sandbox) : undefined;
  const storage = await pipelineStorage(await runtime.storage(), config);
  const { plans, journal } = storage;
  const writer = journalWriter(journal, workspace, onProblem);
  const project = settings.project_state ? projectRecorder(plans, workspace, onProblem) : undefined;
  const emit = (event: PipelineEvent) => {
    writer.write(event);
    project?.on(event);
    show(event);
  };
  for (const message of notes) emit({ type: 'model_note', message });
  const files = await openFileContext(config, workspace, hearthHome(), connection, async () =>
    (await runtime.storage()).memory(),
  );
  const declining = unattendedNote(mode, config.permissions.allow.length);
  if (declining) emit(declining);
  return {
    plans,
    inbox: createPlanInbox(plans, workspace, emit),
    workspace,
    sandbox,
    planner: role(settings.roles.planner),
    planChars: partCharsFor(connection.contextWindow),
    reviewer: role(settings.roles.reviewer),
    coderModel: coderDeps.llm.model,
    ...(swaps.models ? { models: swaps.models } : {}),
    batch: settings.batch,
    coder: {
      create: () => AgentSession.create(coderDeps, runtime.systemPromptFor(connection)),
      open: async (id) => {
        try {
          return AgentSession.open(coderDeps, await store.get(id));
        } catch (err) {
          if (err instanceof SessionNotFoundError) return undefined;
          throw err;
        }
      },
      state: (id, key) => store.readState(id, key),
    },
    ...(git ? { git } : {}),
    fileContext: (task, until) => files.forTask(task, until),
    analyst: settings.analyst,
    commands: settings.commands,
    commandTimeoutMs: settings.command_timeout * 1000,
    qualityGate: settings.quality_gate_mode,
    limits: { ...DEFAULT_LIMITS, maxRework: settings.max_rework },
    ...processOwner(),
    emit,
    pause: {
      paused: () => journal.paused(workspace),
      resumed: (until) => whilePaused(journal, workspace, until),
    },
    ...(signal ? { signal } : {}),
    async close() {
      await writer.flush();
      await project?.flush();
      await journal
        .prune(workspace, JOURNAL_KEEP)
        .catch((err: Error) => onProblem(`the pipeline journal could not be pruned: ${err.message}`));
      await files.close();
      await storage.close();
    },
  };
}

/**
 * Runs the runtime's workspace's pipeline until nothing is left (with `watch`, until stopped), as
 * `hearth pipeline run` and `hearth worker` do.
 */
export async function runWorkspacePipeline(
  runtime: Runtime,
  show: (event: PipelineEvent) => void,
  options: { signal?: AbortSignal; onProblem?: (message: string) => void; watch?: boolean } = {},
): Promise<RunSummary> {
  const connection = await resolveConnection(runtime.config);
  const deps = await pipelineDeps(runtime, connection, show, options.signal, options.onProblem);
  return runPipeline({ ...deps, watch: options.watch === true }).finally(() => deps.close());
}

/** A run's end in one line. */
export function describeSummary(summary: RunSummary): string {
  if (summary.stopped) return `Pipeline stopped: ${summary.stopped}`;
  const done = `${summary.steps} steps, ${summary.recovered} recovered, ${summary.tokens} tokens`;
  return summary.whilePaused
    ? `Pipeline stopped while paused (${done}); workers take nothing until hearth pipeline resume.`
    : `Pipeline idle: ${done}.`;
}
