import { z } from 'zod';
import { parseWhen } from '../../util/when.js';
import { defineTool, ToolError } from '../types.js';

/**
 * Sets this session to resume later with a message ("check the build in an hour"). The wake-up is
 * kept in the store; a running Hearth scheduler (`hearth scheduler`) resumes the session then, with
 * the same settings, so the model gains no permission by it. Declared as changing state, so it
 * asks before setting one unless a rule allows it.
 */
export const scheduleWakeupTool = defineTool({
  name: 'schedule_wakeup',
  description:
    'Resume this session later with a message to yourself (e.g. to check on a long build). at: "in 1h", "tomorrow 09:00" or an ISO time.',
  parameters: z.object({
    at: z.string().min(1),
    message: z.string().min(1).max(2000),
  }),
  mutates: true,
  touches: (args) => ({ text: `${args.at}: ${args.message}` }),
  label: (args) => `wake up ${args.at}`,
  async run(args, ctx) {
    if (!ctx.wakeups) throw new ToolError('Wake-ups need a stored session; this run has none.');
    const at = parseWhen(args.at, ctx.wakeups.now());
    if (typeof at !== 'number') throw new ToolError(at.error);
    const { id } = await ctx.wakeups.schedule(at, args.message);
    return `Wake-up ${id} set for ${new Date(at).toISOString()}. The session resumes then with your message, if a Hearth scheduler is running.`;
  },
});
