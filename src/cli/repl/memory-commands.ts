import type { LongTermMemory } from '../../memory/memory.js';
import type { Memory } from '../../memory/types.js';
import { openCliMemory } from '../../setup/memory-access.js';
import { visible } from '../sanitize.js';
import type { CommandContext, SlashCommand } from './commands.js';

const USAGE = '/memory [search QUERY | add TEXT | forget ID]';

type Verb = (memory: LongTermMemory, text: string, ctx: CommandContext) => Promise<string[]> | string[];

function row(ctx: CommandContext, m: Memory): string {
  return `#${m.id} ${ctx.style.dim(`${m.kind}${m.workspace === null ? ', user' : ''}`)} ${visible(m.text)}`;
}

const verbs: Record<string, Verb> = {
  async list(memory, _text, ctx) {
    const rows = await memory.store.list(memory.view, { limit: 30 });
    const waiting = (await memory.store.proposals.pending(memory.view)).length;
    return [
      ...(rows.length ? rows.map((m) => row(ctx, m)) : ['No memories here yet. /memory add TEXT keeps one.']),
      ...(waiting ? [`${waiting} proposal(s) wait for review: hearth memory review`] : []),
    ];
  },
  async search(memory, text, ctx) {
    if (!text) return [`Usage: ${USAGE}`];
    const found = await memory.find(text, 8);
    return [
      ...(found.keywordOnly ? [`(keyword search only: ${visible(found.keywordOnly)})`] : []),
      ...(found.hits.length ? found.hits.map((hit) => row(ctx, hit.memory)) : ['No memories match.']),
    ];
  },
  async add(memory, text) {
    if (!text) return [`Usage: ${USAGE}`];
    const kept = await memory.remember({ kind: 'fact', workspace: memory.workspace, text, origin: 'user' });
    return [
      kept.duplicate ? `Already remembered as #${kept.memory.id}.` : `Remembered as #${kept.memory.id}.`,
    ];
  },
  async forget(memory, text) {
    const id = Number(text.replace(/^#/, ''));
    return [(await memory.forget(id)) ? `Forgot #${id}.` : `No memory #${visible(text)} here.`];
  },
};

/** /memory: what Hearth remembers here, as `hearth memory` shows it; review stays a command of its own. */
export const memoryCommand: SlashCommand = {
  name: 'memory',
  args: '[ACTION]',
  summary: 'what Hearth remembers here; /memory search|add|forget ...',
  async run(ctx, arg) {
    const [verb = 'list', ...rest] = arg.split(/\s+/).filter(Boolean);
    const handler = verbs[verb];
    if (!handler) return ctx.print(`Usage: ${USAGE}`);
    const memory = await openCliMemory(ctx.repl.runtime, ctx.repl.connection ?? 'find');
    try {
      await memory.syncFiles();
      const lines = await handler(memory, rest.join(' '), ctx);
      // Lines are made safe where stored text goes in (row, visible), before any styling.
      ctx.print(lines.join('\n'));
    } finally {
      await memory.close();
    }
  },
};
