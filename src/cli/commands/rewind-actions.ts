import { resolve } from 'node:path';
import type { Command } from 'commander';
import { openCheckpoints } from '../../checkpoints/open.js';
import { Rewinder } from '../../checkpoints/rewind.js';
import type { RewindPlan } from '../../checkpoints/store.js';
import { hearthHome } from '../../config/sources.js';
import { conflictText, planSummary, turnList } from '../rewind-text.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { RewindFlags } from './rewind.js';

/** Runs `work` with a Rewinder over the flags' runtime, and the session meant (the given one, else the last here). */
async function withRewinder(
  cmd: Command,
  session: string | undefined,
  work: (rewinder: Rewinder, sessionId: string, flags: RewindFlags) => Promise<void>,
): Promise<void> {
  const flags = cmd.optsWithGlobals<RewindFlags>();
  const { runtimeFromFlags } = await import('../options.js');
  const runtime = await runtimeFromFlags(flags);
  try {
    const store = await runtime.sessions();
    const home = hearthHome(process.env);
    const rewinder = new Rewinder(store, (workspace) =>
      openCheckpoints(home, workspace, runtime.config.checkpoints),
    );
    const id = session ? (await store.resolve(session)).id : await rewinder.sessionIn(runtime.workspace);
    if (!id)
      throw new UsageError(`no session in ${resolve(flags.workspace)} yet: name one (hearth sessions --all)`);
    await work(rewinder, id, flags);
  } finally {
    await runtime.close();
  }
}

export function rewind(cmd: Command, session: string | undefined): Promise<void> {
  return withRewinder(cmd, session, async (rewinder, id, flags) => {
    const chosen = [flags.code && 'code', flags.chat && 'chat', flags.both && 'both'].filter(Boolean);
    if (chosen.length > 1) throw new UsageError('give one of --code, --chat and --both');
    const mode = chosen[0] ?? 'code';
    if (flags.to === undefined) {
      process.stdout.write(`Turns of session ${id} ("files": it changed files):\n`);
      process.stdout.write(turnList(await rewinder.turns(id)));
      process.stdout.write(`Go back to before one: hearth rewind ${id} --to TURN [--code|--chat|--both]\n`);
      return;
    }
    const turn = Number(flags.to);
    if (!Number.isInteger(turn) || turn < 1)
      throw new UsageError(`--to takes a turn number, not "${visible(flags.to)}"`);
    await rewinder.turn(id, turn).catch((err: Error) => {
      throw new UsageError(err.message);
    });
    if (mode !== 'chat') await restore(rewinder, id, turn, flags);
    if (mode !== 'code' && !flags.dryRun) {
      const fork = await rewinder.forkChat(id, turn);
      process.stdout.write(
        `The conversation up to before turn ${turn} is now session ${fork.id}; session ${id} is kept as it was.\n` +
          `Go on from it: hearth --resume ${fork.id} "..."\n`,
      );
    }
  });
}

export function undo(cmd: Command, session: string | undefined): Promise<void> {
  return withRewinder(cmd, session, (rewinder, id, flags) => restore(rewinder, id, 'undo', flags));
}

/** Shows what the files go back to, then does it unless refused, a dry run, or nothing to do. */
async function restore(
  rewinder: Rewinder,
  id: string,
  target: number | 'undo',
  flags: RewindFlags,
): Promise<void> {
  const planned = await rewinder.planCode(id, target);
  if ('nothing' in planned) {
    process.stdout.write(`Nothing to put back: ${visible(planned.nothing)}.\n`);
    return;
  }
  const { plan } = planned;
  process.stdout.write(planSummary(plan));
  if (flags.dryRun || plan.changes.length === 0) return;
  refuseConflicts(plan, flags.force === true);
  await rewinder.applyCode(plan);
  process.stdout.write(`Done. To step back out of this: hearth undo ${id}\n`);
}

function refuseConflicts(plan: RewindPlan, force: boolean): void {
  if (plan.conflicts.length === 0 || force) return;
  throw new UsageError(
    `${conflictText(plan)}. Nothing was changed. To overwrite it anyway: add --force (hearth undo then brings it back).`,
  );
}
