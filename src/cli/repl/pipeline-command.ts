import { describeEvent, describeStatus } from '../../pipeline/status.js';
import { PipelineControl } from '../../pipeline/steering.js';
import { pipelineStorage } from '../../pipeline/storage.js';
import { visible } from '../sanitize.js';
import type { SlashCommand } from './commands.js';

/** The last transitions shown under the status: enough to see what just happened. */
const RECENT = 5;

/** /pipeline: the workspace's pipeline as `hearth pipeline status` shows it, with its last events. */
export const pipelineCommand: SlashCommand = {
  name: 'pipeline',
  summary: 'plans, tasks by state, current role and model, tokens (ask the agent to steer it)',
  async run(ctx) {
    const { runtime } = ctx.repl;
    const storage = await pipelineStorage(await runtime.storage(), runtime.config);
    try {
      const status = await new PipelineControl(storage.plans, storage.journal, runtime.workspace).status(
        RECENT,
      );
      const recent = status.recent.map(
        (e) => ctx.style.dim(`  ${new Date(e.at).toLocaleTimeString()} `) + visible(describeEvent(e.event)),
      );
      ctx.print(
        [visible(describeStatus(status)), ...(recent.length ? ['Recent:', ...recent] : [])].join('\n'),
      );
    } finally {
      await storage.close();
    }
  },
};
