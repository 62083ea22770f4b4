import type { ProjectContext } from '../agent/project-context.js';
import { AgentSession, type SessionDeps, type SessionTools } from '../agent/session.js';
import type { Config } from '../config/schema.js';
import { type Connection, createClient, resolveConnection } from '../llm/connection.js';
import type { Approver, PermissionGate } from '../permissions/gate.js';
import { atLeastAsStrict } from '../permissions/modes.js';
import { pickTools } from '../tools/catalog.js';
import { isIndexTool } from '../tools/deferred/search-tools.js';
import type { DeferredGroup } from '../tools/deferred/tool-index.js';
import { bindAlso, type PortedTools } from '../tools/ported.js';
import { ToolRegistry } from '../tools/registry.js';
import type { AnyTool } from '../tools/types.js';
import { type Clock, systemClock } from '../util/clock.js';
import { buildBrief } from './brief.js';
import { runChild } from './child.js';
import type { AgentDefinition } from './definitions.js';
import { failedResult } from './result.js';
import { runInOrder, Semaphore } from './schedule.js';
import { inLineForSlot, type SlotWaitBoard } from './slot-line.js';
import type { SlotPool } from './slots.js';
import { reportResultTool, SUBAGENTS_GROUP } from './tools.js';
import type { SpawnCall, SubagentPort, SubagentResult, SubagentTask } from './types.js';
import { openChildWorktree } from './worktree-child.js';

export interface HostOptions {
  /** The root session's deps: the store, sandbox, approver and limits every child starts from. */
  root: SessionDeps;
  connection: Connection;
  config: Config;
  /** AGENTS.md and the like, read once. */
  context: ProjectContext;
  definitions: readonly AgentDefinition[];
  /** The spawn tools: unbound as offered (told apart from the others by identity), bound per session. */
  spawnTools: PortedTools<SubagentPort>;
  slots: SlotPool;
  /** Runs the children's time limits; the system clock unless a test injects one. */
  clock?: Clock;
  /** The Hearth home, where the worktrees children work in are recorded; unset: no worktrees. */
  home?: string;
}

/** What a session that may start sub-agents brings to them. */
interface Level {
  depth: number;
  /** Its tools: a child's are picked from these. */
  tools: readonly AnyTool[];
  /** The tools behind its index (rarer built-ins, MCP servers'): a child's index is picked from these. */
  deferred: readonly DeferredGroup[];
  gate: PermissionGate;
  tokenBudget?: number;
}

/**
 * One run tree's sub-agents: it makes each child from its parent (tools, permissions, model,
 * limits, brief), runs it through `runChild`, and keeps what the whole tree shares: the server's
 * slots, the models other than the session's, and one approval question at a time.
 */
export class SubagentHost {
  private approvals: Promise<unknown> = Promise.resolve();
  private readonly models = new Map<string, Promise<{ connection: Connection; settings: Config }>>();

  constructor(private readonly options: HostOptions) {}

  /**
   * The session tools of the sessions at `level`: the root's (`.root.sessionTools`, wired before
   * sub-agents: wake-ups) and the spawn tools bound to each session's own port, so the children
   * they start are that session's.
   */
  sessionTools(level: Level): SessionTools {
    const inherited = this.options.root.sessionTools;
    const spawn = this.options.spawnTools;
    return (session) => bindAlso(inherited?.(session), spawn.bind(this.port(level, session.sessionId)));
  }

  /** The port of one session at `level`. */
  private port(level: Level, sessionId: string): SubagentPort {
    const { parallel } = this.options.config.subagents;
    // Spawn calls of one turn may run side by side (they change nothing themselves): together
    // they still start no more children at once than a decomposition would.
    const siblings = new Semaphore(parallel);
    return {
      run: (tasks, call) =>
        runInOrder(tasks, {
          parallel,
          signal: call.signal,
          run: (task, deps) => siblings.use(() => this.child(task, deps, call, { ...level, sessionId })),
        }),
    };
  }

  private async child(
    task: SubagentTask,
    dependencies: SubagentResult[],
    call: SpawnCall,
    parent: Level & { sessionId: string },
  ): Promise<SubagentResult> {
    const { root, config } = this.options;
    const settings = config.subagents;
    const depth = parent.depth + 1;
    const notes: string[] = [];
    const definition = task.agent ? this.definition(task.agent) : undefined;
    if (task.agent && !definition) {
      const known = this.options.definitions.map((d) => d.name).join(', ') || 'none';
      return failedResult(task, `No agent is named "${task.agent}". Known: ${known}.`);
    }

    // The parent's index tools search the parent's index: the child's registry makes its own, over
    // the parent's deferred tools as its definition narrows them (never more than the parent has).
    let tools = parent.tools.filter((t) => t !== reportResultTool && !isIndexTool(t));
    let deferred = parent.deferred;
    if (definition?.tools) {
      const groups = { [SUBAGENTS_GROUP]: [...this.options.spawnTools.unbound] };
      const picked = pickTools(definition.tools, tools, groups);
      tools = picked.tools;
      deferred = narrowDeferred(parent.deferred, definition.tools, groups);
      const known = parent.deferred.flatMap((g) => g.tools());
      const unknown = pickTools(picked.unknown, known, groups).unknown;
      if (unknown.length > 0)
        notes.push(`${definition.file}: ${unknown.join(', ')} picked none of the parent's tools; left out.`);
    }
    const canSpawn = depth < settings.max_depth;
    if (!canSpawn) tools = tools.filter((t) => !this.options.spawnTools.unbound.includes(t));
    const registry = new ToolRegistry([...tools, reportResultTool], deferred);

    let gate = parent.gate;
    const mode = definition?.permissionMode;
    if (mode && mode !== gate.mode) {
      if (atLeastAsStrict(mode, gate.mode)) gate = gate.withMode(mode);
      else
        notes.push(
          `${definition!.file} asks for permission mode ${mode}, less strict than the parent's ${gate.mode}; the parent's applies.`,
        );
    }

    const model = await this.model(definition?.model, notes);
    const place = (task.worktree ?? settings.worktrees) ? await this.worktree(gate) : undefined;
    if (place !== undefined && !place.ok)
      return failedResult(task, `It could not start in a worktree of its own: ${place.error}`);
    const own = place?.child;
    const workspace = own?.worktree.path ?? root.workspace;
    if (own) gate = own.gate;
    const { slots } = this.options;
    const slot = slots.acquire();
    const slotWaits: SlotWaitBoard = {};
    let disposed = false;
    try {
      const brief = buildBrief({
        task,
        workspace,
        context: this.options.context,
        definition,
        parentState: call.durable,
        dependencies,
        toolsInPrompt: model.connection.nativeTools ? undefined : registry.schemas(),
        reportTool: reportResultTool.name,
      });
      const maxIterations = Math.min(definition?.maxTurns ?? settings.max_turns, settings.max_turns);
      const tokenBudget =
        parent.tokenBudget === undefined
          ? undefined
          : Math.max(1, Math.floor(parent.tokenBudget * settings.budget_share));
      const deps: SessionDeps = {
        store: root.store,
        llm: inLineForSlot(createClient(model.connection, model.settings, { slot }), slots, slot, slotWaits),
        tools: registry,
        gate,
        sandbox: own?.sandbox ?? root.sandbox,
        approve: this.approver(task, definition),
        workspace,
        maxIterations,
        tokenBudget,
        todoNudges: 0,
        contextWindow: model.connection.contextWindow,
        compactionThreshold: root.compactionThreshold,
        // The user's hooks guard a sub-agent's calls as they guard its parent's.
        hooks: root.hooks,
        transcriptDir: root.transcriptDir,
        ...(definition ? { agentType: definition.name } : {}),
        sessionTools: canSpawn
          ? this.sessionTools({ depth, tools, deferred, gate, tokenBudget })
          : root.sessionTools,
      };
      const session = await AgentSession.create(deps, brief.systemPrompt, {
        parentId: parent.sessionId,
        depth,
        title: task.objective.replace(/\s+/g, ' ').trim().slice(0, 80),
      });
      const state = session.journal.state;
      gate.carryAnswers(call.durable, state);
      try {
        const result = await runChild({
          session,
          state,
          task,
          depth,
          message: brief.message,
          call,
          parentId: parent.sessionId,
          timeLimitMs: settings.time_limit * 1000,
          slotWaits,
          clock: this.options.clock ?? systemClock,
          notes,
        });
        disposed = true;
        return own ? await own.finish(result, task.objective) : result;
      } finally {
        await session.close();
      }
    } catch (err) {
      // Making the child failed (the store, a bad setting): the parent still gets an answer.
      return failedResult(task, `It could not start: ${(err as Error).message}`);
    } finally {
      slots.release(slot);
      if (own && !disposed) await own.sandbox.dispose();
    }
  }

  /** A worktree of its own for a child (worktree-child.ts), from the root session's workspace. */
  private async worktree(gate: PermissionGate) {
    const { home, config, root } = this.options;
    if (home === undefined)
      return { ok: false as const, error: 'worktrees are not available in this session' };
    return openChildWorktree({ workspace: root.workspace, home, config, gate });
  }

  private definition(name: string): AgentDefinition | undefined {
    const wanted = name.toLowerCase();
    return this.options.definitions.find((d) => d.name.toLowerCase() === wanted);
  }

  /**
   * The connection for a definition's model: a profile of the config, or a model of the same
   * server. The definition is workspace content, so it may not send the conversation to another
   * server: a profile elsewhere, like a name the server lacks, falls back to the session's model.
   */
  private async model(
    name: string | undefined,
    notes: string[],
  ): Promise<{ connection: Connection; settings: Config }> {
    const { connection, config } = this.options;
    const session = { connection, settings: config };
    if (!name || name === connection.model) return session;
    const profile = config.models[name];
    if (
      profile?.base_url &&
      profile.base_url.replace(/\/+$/, '') !== connection.baseUrl.replace(/\/+$/, '')
    ) {
      notes.push(
        `Model profile "${name}" is on another server (${profile.base_url}); an agent definition cannot send the work there. Using ${connection.model}.`,
      );
      return session;
    }
    let found = this.models.get(name);
    if (!found) {
      const settings: Config = {
        ...config,
        ...profile,
        model: profile?.model ?? name,
        base_url: connection.baseUrl,
      };
      found = resolveConnection(settings).then((c) => ({ connection: c, settings }));
      this.models.set(name, found);
    }
    return found.catch((err: unknown) => {
      notes.push(`Model "${name}" is not available (${(err as Error).message}). Using ${connection.model}.`);
      return session;
    });
  }

  /** The root's approver, asking one question at a time, naming the child that asks. */
  private approver(task: SubagentTask, definition: AgentDefinition | undefined): Approver | undefined {
    const approve = this.options.root.approve;
    if (!approve) return undefined;
    const objective = task.objective.replace(/\s+/g, ' ').trim();
    const agent = `${definition ? definition.name : 'sub-agent'}: ${objective.length > 40 ? `${objective.slice(0, 39)}…` : objective}`;
    return (request, signal) => {
      const turn = this.approvals.then(() => approve({ ...request, agent }, signal));
      this.approvals = turn.catch(() => undefined);
      return turn;
    };
  }
}

/**
 * The parent's deferred groups with only the tools a definition's `tools` pick, decided each time
 * the index is read, so an MCP server listed later is narrowed the same way. A group left with
 * nothing is dropped, unless it is still to be listed (then nothing is known to narrow yet).
 */
function narrowDeferred(
  groups: readonly DeferredGroup[],
  names: readonly string[],
  extra: Record<string, AnyTool[]>,
): DeferredGroup[] {
  const pick = (tools: AnyTool[]) => pickTools(names, tools, extra).tools;
  return groups
    .filter((group) => group.tools().length === 0 || pick(group.tools()).length > 0)
    .map((group) => ({
      ...group,
      tools: () => pick(group.tools()),
      // A call by name of a tool not listed yet is narrowed as the listed tool would be.
      unlisted: (name: string) => {
        const tool = group.unlisted?.(name);
        return tool && pick([tool]).length > 0 ? tool : undefined;
      },
    }));
}
