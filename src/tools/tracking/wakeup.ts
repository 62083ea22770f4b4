import { z } from 'zod';
import { parseWhen } from '../../util/when.js';
import { type PortedTools, portedTools } from '../ported.js';
import { defineTool, ToolError } from '../types.js';

/** Wake-ups of the session a call runs in (kept in the store; a scheduler fires them). */
export interface WakeupPort {
  now(): number;
  schedule(at: number, message: string): Promise<{ id: string }>;
}

/**
 * Sets this session to resume later with a message ("check the build in an hour"). The wake-up is
 * kept in the store; a running Hearth scheduler (`hearth scheduler`) resumes the session then, with
 * the same settings, so the model gains no permission by it. Declared as changing state, so it
 * asks before setting one unless a rule allows it. src/setup/ binds it to each stored session.
 */
const scheduleWakeupTool = (port: WakeupPort | undefined) =>
  defineTool({
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
    async run(args) {
      if (!port) throw new ToolError('Wake-ups need a stored session; this run has none.');
      const at = parseWhen(args.at, port.now());
      if (typeof at !== 'number') throw new ToolError(at.error);
      const { id } = await port.schedule(at, args.message);
      return `Wake-up ${id} set for ${new Date(at).toISOString()}. The session resumes then with your message, if a Hearth scheduler is running.`;
    },
  });

export const wakeupTools: PortedTools<WakeupPort> = portedTools((port) => [scheduleWakeupTool(port)]);
