import { openCheckpoints } from '../../checkpoints/open.js';
import { Rewinder } from '../../checkpoints/rewind.js';
import { hearthHome } from '../../config/sources.js';
import { conflictText, planSummary, turnList } from '../rewind-text.js';
import type { CommandContext, SlashCommand } from './commands.js';

const NO_SESSION = 'No session yet: it starts with your first message.';

function rewinderOf(
  ctx: CommandContext,
  store: Awaited<ReturnType<CommandContext['repl']['sessions']>>,
): Rewinder {
  const home = hearthHome(process.env);
  const settings = ctx.repl.runtime.config.checkpoints;
  return new Rewinder(store, (workspace) => openCheckpoints(home, workspace, settings));
}

/** Shows what the files go back to and, on the user's yes, puts them back. */
async function restoreFiles(ctx: CommandContext, rewinder: Rewinder, id: string, target: number | 'undo') {
  const { style } = ctx;
  const planned = await rewinder.planCode(id, target);
  if ('nothing' in planned) return ctx.print(`Nothing to put back: ${planned.nothing}.`);
  const { plan } = planned;
  ctx.print(planSummary(plan), false);
  if (plan.changes.length === 0) return;
  const warning =
    plan.conflicts.length > 0 ? `${style.yellow(`! ${conflictText(plan)}.`)} Overwrite? ` : 'Put them back? ';
  const answer = await ctx.choose(`${warning}${style.cyan('y')} yes · ${style.cyan('n')} no  (one key) `, [
    'y',
    'n',
  ]);
  if (answer !== 'y') return ctx.print('Nothing was changed.');
  await rewinder.applyCode(plan);
  ctx.print(style.dim('Done. /undo steps back out of it.'));
}

const undo: SlashCommand = {
  name: 'undo',
  summary: "step back the last turn's file changes (or the last rewind)",
  async run(ctx) {
    const session = ctx.repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const rewinder = rewinderOf(ctx, await ctx.repl.sessions());
    await restoreFiles(ctx, rewinder, session.id, 'undo');
  },
};

const rewind: SlashCommand = {
  name: 'rewind',
  args: '[TURN]',
  summary: 'go back to before a turn: the files, the conversation (as a fork), or both',
  async run(ctx, arg) {
    const { repl, style } = ctx;
    const session = repl.session;
    if (!session) return ctx.print(NO_SESSION);
    const store = await repl.sessions();
    const rewinder = rewinderOf(ctx, store);
    const turns = await rewinder.turns(session.id);
    if (turns.length === 0) return ctx.print('No turns yet.');
    let picked = arg.trim();
    if (!picked) {
      ctx.print(`Turns ("files": it changed files):\n${turnList(turns)}`, false);
      picked = (await ctx.ask(`Go back to before turn (1-${turns.length}, Enter: none): `))?.trim() ?? '';
      if (!picked) return ctx.print('Nothing was changed.');
    }
    const number = Number(picked);
    if (!Number.isInteger(number) || number < 1 || number > turns.length) {
      return ctx.print(`No turn ${picked}: pick 1 to ${turns.length}.`);
    }
    const what = await ctx.choose(
      `Rewind ${style.cyan('f')} files · ${style.cyan('c')} conversation · ${style.cyan('b')} both  (one key) `,
      ['f', 'c', 'b'],
    );
    if (what === undefined) return ctx.print('Nothing was changed.');
    if (what !== 'c') await restoreFiles(ctx, rewinder, session.id, number);
    if (what !== 'f') {
      const fork = await rewinder.forkChat(session.id, number);
      await repl.resume(fork);
      ctx.print(
        `Now in session ${style.cyan(fork.id)}: the conversation before turn ${number}. (${session.id} is kept: /resume ${session.id})`,
      );
    }
  },
};

export const rewindCommands: SlashCommand[] = [undo, rewind];
