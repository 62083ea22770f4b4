import { z } from 'zod';
import { type PortedTools, portedTools } from '../ported.js';
import { defineTool, ToolError } from '../types.js';
import type { PipelinePort } from './port.js';

export type { PipelinePort } from './port.js';

function pipelineOf(port: PipelinePort | undefined): PipelinePort {
  if (!port) throw new ToolError('This workspace has no pipeline (hearth plan add FILE.md starts one).');
  return port;
}

/** A plan, not a dump of files: the planner reads it in parts of its window anyway. */
const MAX_PLAN_CHARS = 100_000;

const pipelineStatusTool = (port: PipelinePort | undefined) =>
  defineTool({
    name: 'pipeline_status',
    description: "The workspace pipeline's plans, tasks by state, current role and model, tokens.",
    parameters: z.object({}),
    mutates: false,
    async run() {
      return pipelineOf(port).status();
    },
  });

const planCreateTool = (port: PipelinePort | undefined) =>
  defineTool({
    name: 'plan_create',
    description:
      'Queue a Markdown plan (title heading, then what to build) for the pipeline; the same plan twice is stored once.',
    parameters: z.object({ markdown: z.string().trim().min(1).max(MAX_PLAN_CHARS) }),
    mutates: true,
    touches: (args) => ({ text: args.markdown }),
    label: (args) => `plan_create: ${titleOf(args.markdown)}`,
    preview: async (args) => args.markdown,
    async run(args) {
      const added = await pipelineOf(port).addPlan(args.markdown);
      return added.created
        ? `Stored plan #${added.id}: ${added.title}. A running pipeline picks it up; else: hearth pipeline run.`
        : `This plan is stored already as #${added.id} (${added.state}); nothing added.`;
    },
  });

const pipelineRetryFailedTool = (port: PipelinePort | undefined) =>
  defineTool({
    name: 'pipeline_retry_failed',
    description: 'Put failed pipeline tasks (and the dependents that failed with them) back in the queue.',
    parameters: z.object({}),
    mutates: true,
    touches: () => ({ text: 'retry failed tasks' }),
    label: () => 'retry the failed pipeline tasks',
    async run() {
      const n = await pipelineOf(port).retryFailed();
      return n ? `${n} failed task(s) back in the queue.` : 'No failed tasks.';
    },
  });

const pipelinePauseTool = (port: PipelinePort | undefined) =>
  defineTool({
    name: 'pipeline_pause',
    description: 'Pause the pipeline: running workers finish their step and take no new one.',
    parameters: z.object({}),
    mutates: true,
    touches: () => ({ text: 'pause' }),
    label: () => 'pause the pipeline',
    async run() {
      return (await pipelineOf(port).setPaused(true)) ? 'Paused.' : 'It was paused already.';
    },
  });

const pipelineResumeTool = (port: PipelinePort | undefined) =>
  defineTool({
    name: 'pipeline_resume',
    description: 'Resume a paused pipeline.',
    parameters: z.object({}),
    mutates: true,
    touches: () => ({ text: 'resume' }),
    label: () => 'resume the pipeline',
    async run() {
      return (await pipelineOf(port).setPaused(false)) ? 'Resumed.' : 'It was not paused.';
    },
  });

/** The plan's title as the store takes it: its first heading, else its first line. */
function titleOf(markdown: string): string {
  const line = /^#+\s*(.+)$/m.exec(markdown)?.[1] ?? markdown.split('\n')[0] ?? '';
  return line.trim().slice(0, 80);
}

/**
 * Steering the workspace's pipeline from the conversation. Offered (behind the index) only where the
 * workspace has a pipeline: src/setup/ binds them to its port. Each tool can only add work or hold
 * it: none drops a task, skips a check or changes a setting, so a prompt-injected model gains
 * nothing it could not ask a person for; everything but the status asks like any change.
 */
export const pipelineTools: PortedTools<PipelinePort> = portedTools((port) => [
  pipelineStatusTool(port),
  planCreateTool(port),
  pipelineRetryFailedTool(port),
  pipelinePauseTool(port),
  pipelineResumeTool(port),
]);
