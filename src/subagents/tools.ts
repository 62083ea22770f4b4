import { z } from 'zod';
import { type PortedTools, portedTools } from '../tools/ported.js';
import { defineTool, type ToolContext, ToolError, type ToolOutput } from '../tools/types.js';
import type { AgentDefinition } from './definitions.js';
import { describeResults, REPORT_KEY, resultForModel } from './result.js';
import type { SpawnCall, SubagentContract, SubagentPort, SubagentTask } from './types.js';

/*
 * The Brief-Contract tools (after LMAgent's): `delegate` and `decompose` start sub-agents, each with
 * a short brief instead of this conversation; `report_result` is the child's side of the contract
 * and is offered to children only. Every schema here is sent with every request, so it stays terse.
 */

/** The tool group's name: `--tools default,subagents` offers the spawn tools too. */
export const SUBAGENTS_GROUP = 'subagents';

const MAX_TASKS = 12;
/** Named agents listed in the tool description; more are still accepted by name. */
const LISTED_AGENTS = 10;

const deliverableFields = {
  deliverable_type: z.enum(['file', 'text', 'data']).default('text'),
  deliverable_path: z.string().optional(),
  deliverable_description: z.string().optional(),
  data_hint: z.string().optional().describe('facts it needs that it cannot find itself'),
};

/**
 * The spawn tools, offered where sub-agents are on; `agents` are the named definitions to offer.
 * Each session binds them to its own port (src/subagents/setup.ts): the children they start are
 * that session's, at its depth.
 */
export function spawnTools(agents: readonly AgentDefinition[]): PortedTools<SubagentPort> {
  return portedTools((port) => spawnToolsOver(agents, port));
}

function spawnToolsOver(agents: readonly AgentDefinition[], port: SubagentPort | undefined) {
  const names = agents.map((a) => a.name);
  // Offered only when there are definitions: an empty choice costs tokens and invites guesses.
  const agent: { agent?: z.ZodOptional<z.ZodType<string>> } =
    names.length > 0 ? { agent: z.enum(names as [string, ...string[]]).optional() } : {};
  const listed = agents
    .slice(0, LISTED_AGENTS)
    .map((a) => (a.description ? `${a.name} (${a.description.slice(0, 60)})` : a.name))
    .join(', ');
  const agentsNote = names.length > 0 ? ` Named agents: ${listed}.` : '';

  const delegateArgs = z.object({
    objective: z.string().min(1),
    ...deliverableFields,
    ...agent,
    worktree: z.boolean().optional(),
  });
  const delegate = defineTool({
    name: 'delegate',
    description: `Hand one focused job to a sub-agent. It starts fresh (it sees none of this conversation), so state everything it needs; it returns status, summary and deliverables. worktree: true gives it its own git branch to merge.${agentsNote}`,
    parameters: delegateArgs,
    // Starting one changes nothing; each call the child makes is checked as any other.
    mutates: false,
    label: (args) => `delegate: ${args.objective}`,
    async run(args, ctx) {
      const [result] = await portOf(port).run([taskOf(args)], spawnCall(ctx));
      return output([result!], resultForModel(result!));
    },
  });

  const taskArgs = z.object({
    task_id: z.string().min(1),
    objective: z.string().min(1),
    depends_on: z.array(z.string()).default([]),
    ...deliverableFields,
    ...agent,
    worktree: z.boolean().optional(),
  });
  const decompose = defineTool({
    name: 'decompose',
    description: `Split work into tasks, each done by a sub-agent with a fresh context; tasks run after the ones in their depends_on and get their results. Returns every task's result.${agentsNote}`,
    parameters: z.object({ tasks: z.array(taskArgs).min(1).max(MAX_TASKS) }),
    mutates: false,
    label: (args) => `decompose: ${args.tasks.map((t) => t.task_id).join(', ')}`,
    async run(args, ctx) {
      const tasks = args.tasks.map((t) => ({ ...taskOf(t), taskId: t.task_id, dependsOn: t.depends_on }));
      const problem = planProblem(tasks);
      if (problem) throw new ToolError(problem);
      const results = await portOf(port).run(tasks, spawnCall(ctx));
      return output(results, JSON.stringify({ results: results.map((r) => JSON.parse(resultForModel(r))) }));
    },
  });
  return [delegate, decompose];
}

/** The child's contract: it reports once, last; the run ends right after. */
export const reportResultTool = defineTool({
  name: 'report_result',
  description:
    'Finish your job: report status (done, failed or partial), a short summary, and your deliverables (paths written, or values). Call it once, last.',
  parameters: z.object({
    status: z.enum(['done', 'failed', 'partial']),
    summary: z.string().min(1),
    deliverables: z.array(z.string()).default([]),
    notes: z.string().optional(),
  }),
  mutates: false,
  ends: true,
  label: (args) => `report_result: ${args.status}`,
  async run(args, ctx) {
    const contract: SubagentContract = {
      status: args.status,
      summary: args.summary,
      deliverables: args.deliverables,
      ...(args.notes ? { notes: args.notes } : {}),
    };
    ctx.durable.set(REPORT_KEY, contract);
    return 'Result recorded. Your work is done.';
  },
});

function taskOf(args: {
  objective: string;
  deliverable_type: 'file' | 'text' | 'data';
  deliverable_path?: string;
  deliverable_description?: string;
  data_hint?: string;
  /** Present only when definitions are offered (then a name among them). */
  agent?: unknown;
  worktree?: boolean;
}): SubagentTask {
  return {
    objective: args.objective,
    deliverable: {
      type: args.deliverable_type,
      ...(args.deliverable_path ? { path: args.deliverable_path } : {}),
      ...(args.deliverable_description ? { description: args.deliverable_description } : {}),
    },
    ...(args.data_hint ? { dataHint: args.data_hint } : {}),
    ...(typeof args.agent === 'string' ? { agent: args.agent } : {}),
    ...(args.worktree !== undefined ? { worktree: args.worktree } : {}),
    dependsOn: [],
  };
}

/** Duplicate ids, unknown dependencies and cycles, worded for the model to fix the call. */
function planProblem(tasks: readonly SubagentTask[]): string | undefined {
  const ids = tasks.map((t) => t.taskId ?? '');
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate !== undefined) return `Two tasks have the task_id "${duplicate}"; give each its own.`;
  for (const task of tasks) {
    const unknown = task.dependsOn.filter((d) => !ids.includes(d));
    if (unknown.length > 0)
      return `Task "${task.taskId}" depends on ${unknown.map((u) => `"${u}"`).join(', ')}, which is not a task_id here. Known: ${ids.join(', ')}.`;
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const byId = new Map(tasks.map((t) => [t.taskId ?? '', t]));
  const visit = (id: string, path: string[]): string | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id].join(' → ');
    state.set(id, 'visiting');
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      const cycle = visit(dep, [...path, id]);
      if (cycle) return cycle;
    }
    state.set(id, 'done');
    return undefined;
  };
  for (const id of ids) {
    const cycle = visit(id, []);
    if (cycle) return `The tasks' depends_on form a cycle (${cycle}); no order can run them. Break it.`;
  }
  return undefined;
}

function portOf(port: SubagentPort | undefined): SubagentPort {
  if (!port) throw new ToolError('Sub-agents are not available in this session.');
  return port;
}

function spawnCall(ctx: ToolContext): SpawnCall {
  return {
    callId: ctx.callId ?? '',
    signal: ctx.signal,
    durable: ctx.durable,
    relay: (event) => ctx.relay?.(event),
  };
}

/**
 * The results as the model and a person see them. The call itself worked even when a child failed:
 * that is news for the model to act on (the result says why), not a call to fix and retry.
 */
function output(results: Parameters<typeof describeResults>[0], forModel: string): ToolOutput {
  return { output: forModel, display: describeResults(results) };
}
