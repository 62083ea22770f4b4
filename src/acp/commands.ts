import { resolve } from 'node:path';
import type { AvailableCommand, ContentBlock, SessionUpdate } from '@agentclientprotocol/sdk';
import { COMPACTION_METHODS } from '../agent/compaction.js';
import type { Runtime } from '../agent/runtime.js';
import type { AgentSession } from '../agent/session.js';
import { openCheckpoints } from '../checkpoints/open.js';
import { Rewinder, type TurnInfo } from '../checkpoints/rewind.js';
import type { RewindPlan } from '../checkpoints/store.js';
import { hearthHome } from '../config/sources.js';
import { type CallView, type ToolCallViews, textContent } from './tool-calls.js';

/**
 * Hearth's own commands an editor offers after a `/` (ACP has no rewind of its own: its session
 * methods create, load, list and fork, none goes back), answered here without the model.
 */
export const HEARTH_COMMANDS: AvailableCommand[] = [
  { name: 'undo', description: 'Put back the files the last turn changed (or step out of the last rewind)' },
  {
    name: 'rewind',
    description: 'Put the files back to before a turn, and copy the conversation before it to a new session',
    input: { hint: 'turn number (none: list the turns)' },
  },
  { name: 'compact', description: 'Summarize the older part of the conversation now' },
];

/** What a command needs of its session. */
export interface CommandHost {
  agent: AgentSession;
  runtime: Runtime;
  views: ToolCallViews;
  send(update: SessionUpdate): Promise<void>;
  /** Asks the editor whether to go on; false when the user declines or the prompt is cancelled. */
  confirm(toolCallId: string, title: string, detail: string, signal: AbortSignal): Promise<boolean>;
}

/** The built-in command a prompt is, as name and argument; undefined when it is a task for the model. */
export function commandOf(blocks: readonly ContentBlock[]): { name: string; arg: string } | undefined {
  if (blocks.length !== 1 || blocks[0]!.type !== 'text') return undefined;
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(blocks[0]!.text.trim());
  if (!match || !HEARTH_COMMANDS.some((c) => c.name === match[1])) return undefined;
  return { name: match[1]!, arg: match[2]!.trim() };
}

let seq = 0;

export async function runCommand(
  host: CommandHost,
  command: { name: string; arg: string },
  signal: AbortSignal,
): Promise<void> {
  const say = (text: string) =>
    host.send({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  if (command.name === 'compact') return compact(host, say, signal);
  const rewinder = new Rewinder(await host.runtime.sessions(), (workspace) =>
    openCheckpoints(hearthHome(process.env), workspace, host.runtime.config.checkpoints),
  );
  const id = host.agent.id;
  if (command.name === 'undo') {
    await restore(host, rewinder, 'undo', say, signal);
    return;
  }
  const turns = await rewinder.turns(id);
  if (turns.length === 0) return say('No turns yet.');
  if (!command.arg) return say(`${turnList(turns)}\n\nGo back to before one with /rewind N.`);
  const number = Number(command.arg);
  if (!Number.isInteger(number) || number < 1 || number > turns.length)
    return say(`No turn ${command.arg}: pick 1 to ${turns.length}.`);
  if (!(await restore(host, rewinder, number, say, signal))) return;
  const fork = await rewinder.forkChat(id, number);
  await say(
    `\nThe conversation before turn ${number} is now session ${fork.id}, in the session list; this one keeps all of it.`,
  );
}

/** Puts the files back, shown as an edit with its diffs; asks first when it would overwrite changes. */
async function restore(
  host: CommandHost,
  rewinder: Rewinder,
  target: number | 'undo',
  say: (text: string) => Promise<void>,
  signal: AbortSignal,
): Promise<boolean> {
  const planned = await rewinder.planCode(host.agent.id, target);
  if ('nothing' in planned) {
    await say(`Nothing to put back: ${planned.nothing}.`);
    return false;
  }
  const { plan } = planned;
  const summary = planSummary(plan);
  if (plan.changes.length === 0) {
    await say(summary);
    return false;
  }
  const callId = `hearth-${target === 'undo' ? 'undo' : 'rewind'}-${++seq}`;
  const title = target === 'undo' ? 'Undo the last change' : `Rewind the files to before turn ${target}`;
  if (plan.conflicts.length > 0 && !(await host.confirm(callId, title, conflictText(plan), signal))) {
    await say('Nothing was changed.');
    return false;
  }
  const writes = plan.changes.map((change) => resolve(host.runtime.workspace, change.path));
  const view: CallView = {
    title,
    kind: 'edit',
    locations: writes.map((path) => ({ path })),
    rawInput: { target },
    writes,
    command: false,
  };
  await host.views.remember(callId, view);
  await host.send({ sessionUpdate: 'tool_call', ...host.views.started(callId, view), status: 'in_progress' });
  await rewinder.applyCode(plan);
  const content = await host.views.finished(callId, true, summary);
  await host.send({
    sessionUpdate: 'tool_call_update',
    toolCallId: callId,
    status: 'completed',
    content: [textContent(summary), ...content.filter((c) => c.type === 'diff')],
  });
  await say('Done. /undo steps back out of it.');
  return true;
}

async function compact(host: CommandHost, say: (text: string) => Promise<void>, signal: AbortSignal) {
  if (host.agent.messages.length < 4) return say('Nothing to compact yet.');
  const result = await host.agent.compact(signal).catch((err: Error) => err);
  if (result instanceof Error) return say(`Could not compact: ${result.message}`);
  if (result.method === 'none') return say(`Not compacted: ${COMPACTION_METHODS.none}.`);
  await say(
    `Compacted (${COMPACTION_METHODS[result.method]}): about ${result.before} → ${result.after} tokens.`,
  );
  const size = host.agent.contextWindow;
  if (size) await host.send({ sessionUpdate: 'usage_update', used: result.after, size });
}

/** The editor renders Markdown: the turns as a numbered list, marking those that changed files. */
function turnList(turns: readonly TurnInfo[]): string {
  return turns
    .map((t) => `${t.number}. ${t.label || '(no text)'}${t.changedFiles ? ' (changed files)' : ''}`)
    .join('\n');
}

const WORD = { added: 'restored', modified: 'reverted', deleted: 'removed' } as const;
const SHOWN = 40;

/** What going back does, file by file. */
function planSummary(plan: RewindPlan): string {
  if (plan.changes.length === 0) return 'The files are already as they were: nothing to change.';
  const lines = plan.changes.slice(0, SHOWN).map((c) => `- ${WORD[c.status]} \`${c.path}\``);
  if (plan.changes.length > SHOWN) lines.push(`- and ${plan.changes.length - SHOWN} more`);
  if (plan.skipped.length > 0)
    lines.push(`\nNot kept in that checkpoint, left as they are: ${plan.skipped.join(', ')}`);
  return `To ${plan.description}:\n${lines.join('\n')}`;
}

function conflictText(plan: RewindPlan): string {
  const names = plan.conflicts.slice(0, 10).join(', ');
  const more = plan.conflicts.length > 10 ? ` and ${plan.conflicts.length - 10} more` : '';
  return `${names}${more} changed since the agent's last change in this session (by you, or another program); going back overwrites it.`;
}
