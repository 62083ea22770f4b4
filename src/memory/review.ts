import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { LongTermMemory } from './memory.js';
import type { Proposal } from './proposals.js';
import { writeSkill } from './skill-files.js';
import type { ProposalStorage } from './storage.js';
import type { Memory } from './types.js';

export type Reviewed = { ok: true; memory: Memory; skillPath?: string } | { ok: false; error: string };

/**
 * Accepts a proposal (with the reviewer's text, when they edited it): it becomes a memory linked to
 * the session and message it came from. A skill is written as its Agent Skill folder first; if
 * storing the memory then fails, the folder is removed again, so nothing is left half-done.
 */
export async function acceptProposal(
  memory: LongTermMemory,
  proposal: Proposal,
  options: { skillsDir: string; text?: string },
): Promise<Reviewed> {
  const proposals = memory.store.proposals;
  const status = (await proposals.get(proposal.id))?.status;
  if (status !== 'pending')
    return { ok: false, error: `proposal ${proposal.id} was ${status ?? 'removed'} already` };
  const text = options.text?.trim() || proposal.text;
  let skillPath: string | undefined;
  const skill = proposal.detail.skill;
  if (proposal.kind === 'skill' && skill) {
    const origin = `Written by Hearth's reflection on session ${proposal.sessionId ?? '?'}, message ${proposal.messageSeq ?? '?'}.`;
    const written = await writeSkill(options.skillsDir, { ...skill, description: text }, origin);
    if (!written.ok) return { ok: false, error: written.error };
    skillPath = written.path;
  }
  const undoSkill = async () => {
    if (skillPath) await rm(dirname(skillPath), { recursive: true, force: true });
  };
  try {
    const stored = await proposals.accept(proposal.id, {
      kind: proposal.kind,
      workspace: proposal.workspace,
      text: skill ? `Skill ${skill.name}: ${text}` : text,
      detail: skillPath ?? proposal.detail.evidence ?? null,
      origin: 'reflection',
      sessionId: proposal.sessionId,
      messageSeq: proposal.messageSeq,
    });
    if (stored) return { ok: true, memory: stored, ...(skillPath ? { skillPath } : {}) };
    await undoSkill();
    return { ok: false, error: `proposal ${proposal.id} was decided meanwhile` };
  } catch (err) {
    await undoSkill();
    return { ok: false, error: (err as Error).message };
  }
}

export async function rejectProposal(
  proposals: ProposalStorage,
  proposal: Proposal,
): Promise<{ ok: true } | { ok: false; error: string }> {
  if (!(await proposals.reject(proposal.id))) {
    return {
      ok: false,
      error: `proposal ${proposal.id} was ${(await proposals.get(proposal.id))?.status ?? 'removed'} already`,
    };
  }
  return { ok: true };
}
