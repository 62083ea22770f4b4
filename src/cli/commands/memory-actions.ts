import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { Runtime } from '../../agent/runtime.js';
import { memoriesMarkdown } from '../../memory/export.js';
import type { LongTermMemory } from '../../memory/memory.js';
import type { Proposal } from '../../memory/proposals.js';
import { acceptProposal, rejectProposal } from '../../memory/review.js';
import { MEMORY_KINDS, type Memory, type MemoryKind } from '../../memory/types.js';
import { describeReflection, openCliMemory, reflect, skillsDir } from '../../setup/memory-access.js';
import { resolveConnection } from '../connect.js';
import { runtimeFromFlags } from '../options.js';
import { terminalJson, visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import type { MemoryFlags } from './memory.js';

async function withMemory(
  cmd: Command,
  server: 'find' | 'none',
  work: (memory: LongTermMemory, runtime: Runtime, flags: MemoryFlags) => void | Promise<void>,
): Promise<void> {
  const flags = cmd.optsWithGlobals<MemoryFlags>();
  const runtime = await runtimeFromFlags(flags);
  try {
    const memory = await openCliMemory(runtime, server === 'find' ? 'find' : undefined);
    try {
      await memory.syncFiles();
      await work(memory, runtime, flags);
    } finally {
      await memory.close();
    }
  } finally {
    await runtime.close();
  }
}

const out = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

function printMemories(memories: readonly Memory[], json: boolean | undefined): void {
  if (json) {
    out(terminalJson(memories));
    return;
  }
  if (memories.length === 0) {
    out('No memories here yet (hearth memory add TEXT, or let reflection propose some).');
    return;
  }
  for (const m of memories) {
    const scope = m.workspace === null ? 'user' : 'project';
    out(
      `#${String(m.id).padEnd(5)} ${m.kind.padEnd(10)} ${scope.padEnd(7)} ${visible(m.text.replace(/\s+/g, ' '))}`,
    );
  }
}

function kindNamed(
  kind: string | undefined,
  allowed: readonly MemoryKind[] = MEMORY_KINDS,
): MemoryKind | undefined {
  if (kind === undefined) return undefined;
  if (!allowed.includes(kind as MemoryKind))
    throw new UsageError(`Unknown kind "${kind}": use ${allowed.join(', ')}.`);
  return kind as MemoryKind;
}

function memoryId(text: string): number {
  const id = Number(text.replace(/^#/, ''));
  if (!Number.isInteger(id) || id <= 0)
    throw new UsageError(`"${text}" is not a memory id (a number, as hearth memory list shows).`);
  return id;
}

export function list(cmd: Command, opts: { kind?: string; limit: string }): Promise<void> {
  return withMemory(cmd, 'none', async (memory, _runtime, flags) => {
    const kind = kindNamed(opts.kind);
    const rows = await memory.store.list(flags.all ? 'all' : memory.view, {
      limit: Number(opts.limit) || 50,
      kinds: kind ? [kind] : undefined,
    });
    printMemories(rows, flags.json);
    const waiting = (await memory.store.proposals.pending(flags.all ? 'all' : memory.view)).length;
    if (!flags.json && waiting > 0) out(`${waiting} proposal(s) wait for review: hearth memory review`);
  });
}

export function search(cmd: Command, query: string, k: number): Promise<void> {
  return withMemory(cmd, 'find', async (memory, _runtime, flags) => {
    const found = await memory.find(query, k, { view: flags.all ? 'all' : memory.view });
    if (found.keywordOnly && !flags.json)
      process.stderr.write(`(keyword search only: ${visible(found.keywordOnly)})\n`);
    printMemories(
      found.hits.map((hit) => hit.memory),
      flags.json,
    );
  });
}

export function add(cmd: Command, text: string, opts: { kind: string; user?: boolean }): Promise<void> {
  return withMemory(cmd, 'find', async (memory) => {
    if (!text.trim()) throw new UsageError('Nothing to remember: hearth memory add "TEXT"');
    const kind = kindNamed(opts.kind, ['fact', 'preference', 'learning'])!;
    const kept = await memory.remember({
      kind,
      workspace: opts.user ? null : memory.workspace,
      text,
      origin: 'user',
    });
    out(
      kept.duplicate
        ? `Already remembered as #${kept.memory.id}: ${visible(kept.memory.text)}`
        : `Remembered as #${kept.memory.id} (${kind}, ${opts.user ? 'every workspace' : 'this workspace'}).`,
    );
  });
}

export function forget(cmd: Command, id: string): Promise<void> {
  return withMemory(cmd, 'none', async (memory) => {
    const n = memoryId(id);
    const gone = await memory.store.get(n);
    if (!gone || !(await memory.forget(n)))
      throw new UsageError(`No memory #${n} in this workspace (hearth memory list shows ids).`);
    out(`Forgot #${n}: ${visible(gone.text)}`);
  });
}

export function exportMemories(cmd: Command, opts: { format: string; output?: string }): Promise<void> {
  return withMemory(cmd, 'none', async (memory, _runtime, flags) => {
    if (opts.format !== 'md' && opts.format !== 'json')
      throw new UsageError(`Unknown format "${opts.format}": use md or json.`);
    const rows = await memory.store.list(flags.all ? 'all' : memory.view);
    const text = opts.format === 'md' ? memoriesMarkdown(rows) : `${JSON.stringify(rows, null, 2)}\n`;
    if (opts.output) await writeFile(opts.output, text);
    else out(opts.format === 'md' ? visible(text) : terminalJson(rows, 2));
  });
}

export function reflectCommand(cmd: Command, sessionId: string | undefined): Promise<void> {
  return withMemory(cmd, 'none', async (_memory, runtime) => {
    const store = await runtime.sessions();
    const row = sessionId ? await store.resolve(sessionId) : await store.latest(runtime.workspace);
    if (!row)
      throw new UsageError(
        `No session in ${runtime.workspace} to reflect on. Name one: hearth memory reflect ID`,
      );
    const connection = await resolveConnection(runtime.config);
    // Opened again with the chat model's server: its embedder checks proposals for duplicates.
    const withServer = await openCliMemory(runtime, connection);
    process.stderr.write(`Reflecting on session ${row.id} with ${connection.model}...\n`);
    const outcome = await reflect(runtime, connection, withServer, row.id, (text) =>
      process.stderr.write(`  ${text}\n`),
    ).finally(() => withServer.close());
    out(visible(describeReflection(row.id, outcome)));
    if (outcome.status === 'reflected') for (const p of outcome.proposals) out(describeProposal(p));
    if (outcome.status === 'failed') process.exitCode = 1;
  });
}

function describeProposal(p: Proposal): string {
  const scope = p.workspace === null ? 'user' : 'project';
  const evidence = p.detail.evidence ? `\n        evidence: ${p.detail.evidence}` : '';
  const skill = p.detail.skill
    ? `\n        skill ${p.detail.skill.name}: ${p.detail.skill.steps.join(' / ')}`
    : '';
  const from = p.sessionId ? `\n        from session ${p.sessionId}, message ${p.messageSeq ?? '?'}` : '';
  return visible(`[${p.id}] ${p.kind} (${scope}) ${p.text}${evidence}${skill}${from}`);
}

function pickIds(text: string, pending: readonly Proposal[]): Proposal[] {
  if (text === 'all') return [...pending];
  return text.split(',').map((part) => {
    const id = Number(part.trim());
    const found = pending.find((p) => p.id === id);
    if (!found)
      throw new UsageError(
        `No pending proposal ${part.trim()}. Pending: ${pending.map((p) => p.id).join(', ') || 'none'}.`,
      );
    return found;
  });
}

export function review(
  cmd: Command,
  opts: { accept?: string; reject?: string; text?: string },
): Promise<void> {
  return withMemory(cmd, 'find', async (memory, _runtime, flags) => {
    const proposals = memory.store.proposals;
    const pending = await proposals.pending(flags.all ? 'all' : memory.view);
    const accept = async (p: Proposal, text?: string) => {
      const result = await acceptProposal(memory, p, { skillsDir: skillsDir(), text });
      out(
        result.ok
          ? `Accepted [${p.id}] as #${result.memory.id}${result.skillPath ? ` (skill written to ${result.skillPath})` : ''}.`
          : `Could not accept [${p.id}]: ${visible(result.error)}`,
      );
      if (!result.ok) process.exitCode = 1;
    };
    if (opts.accept || opts.reject) {
      const accepting = opts.accept ? pickIds(opts.accept, pending) : [];
      if (opts.text !== undefined && accepting.length !== 1)
        throw new UsageError('--text goes with one proposal: --accept ID --text "..."');
      const rejecting = opts.reject ? pickIds(opts.reject, pending) : [];
      for (const p of accepting) await accept(p, opts.text);
      for (const p of rejecting) {
        await rejectProposal(proposals, p);
        out(`Rejected [${p.id}].`);
      }
      return;
    }
    if (pending.length === 0) return out('No proposals wait for review.');
    if (!process.stdin.isTTY) {
      for (const p of pending) out(describeProposal(p));
      return out(
        'Answer with: hearth memory review --accept IDS | --reject IDS (ids separated by commas, or all)',
      );
    }
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      for (const p of pending) {
        out(describeProposal(p));
        const answer = (await rl.question('  [a]ccept, [e]dit, [r]eject, [s]kip, [q]uit? '))
          .trim()
          .toLowerCase();
        if (answer.startsWith('q')) break;
        if (answer.startsWith('a')) await accept(p);
        else if (answer.startsWith('e')) {
          const text = await rl.question('  new text: ');
          if (text.trim()) await accept(p, text);
        } else if (answer.startsWith('r')) {
          await rejectProposal(proposals, p);
          out(`Rejected [${p.id}].`);
        }
      }
    } finally {
      rl.close();
    }
  });
}
