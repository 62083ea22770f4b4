import type { LlmClient } from '../../llm/client.js';
import { normalizeText } from '../../store/memory/memory-rows.js';
import type { SessionStorage } from '../../store/session-storage.js';
import { type LongTermMemory, sayTheSame } from '../memory.js';
import type { NewProposal, Proposal } from '../proposals.js';
import { acceptProposal } from '../review.js';
import { skillName } from '../skill-files.js';
import {
  type Extracted,
  parseReflection,
  REFLECTION_INSTRUCTIONS,
  REFLECTION_SYSTEM,
} from './proposal-schema.js';
import { chunkTranscript, type TranscriptLine, transcriptLines } from './transcript.js';

export interface ReflectOptions {
  memory: LongTermMemory;
  sessions: SessionStorage;
  llm: LlmClient;
  sessionId: string;
  /** The model's window, in tokens: each chunk of the session fits in it with the instructions and the answer. */
  contextWindow: number;
  /** Store proposals as memories at once instead of waiting for review (memory.auto_accept). */
  autoAccept: boolean;
  /** Where accepted skills are written, one Agent Skill folder each. */
  skillsDir: string;
  signal?: AbortSignal;
  /** Told "chunk 2 of 5" as the model works through a long session. */
  onProgress?: (text: string) => void;
}

export type ReflectOutcome =
  | { status: 'reflected'; proposals: Proposal[]; accepted: number; dropped: number; notes: string[] }
  | { status: 'already'; at: number }
  | { status: 'failed'; error: string };

/** What the instructions and the answer take of the window; the rest is for the session. */
const ANSWER_TOKENS = 1500;
const INSTRUCTION_TOKENS = 700;
/** Chunks no larger than this even on a large window: a slow machine reads a long prompt for minutes. */
const MAX_CHUNK_TOKENS = 12_000;
const MIN_CHUNK_TOKENS = 1000;

/**
 * Reflects on one session (the messages since its last reflection): the model reads it in chunks that fit its window and proposes
 * knowledge, learnings and skills as JSON (validated entry by entry). Proposals that repeat a
 * memory, a pending proposal or each other are dropped. Nothing is written until every chunk is
 * read; then the proposals and the mark that the session was reflected are written in one
 * transaction, so a crash leaves nothing half-written and each message is reflected on once.
 */
export async function reflectOnSession(options: ReflectOptions): Promise<ReflectOutcome> {
  const { sessions, sessionId } = options;
  const proposals = options.memory.store.proposals;
  const last = await proposals.lastReflection(sessionId);
  const [session, messages] = await Promise.all([sessions.get(sessionId), sessions.messages(sessionId)]);
  // A session used again after a reflection (a gateway session) is read from where that one ended.
  const lines = transcriptLines(messages).filter((line) => last === undefined || line.seq > last.through);
  if (last !== undefined && lines.length === 0) return { status: 'already', at: last.at };
  const span = { after: last?.through, through: messages.length - 1 };
  const budget = Math.max(
    MIN_CHUNK_TOKENS,
    Math.min(MAX_CHUNK_TOKENS, options.contextWindow - ANSWER_TOKENS - INSTRUCTION_TOKENS),
  );
  const chunks = chunkTranscript(lines, budget);
  const found: Array<{ extracted: Extracted; chunk: TranscriptLine[] }> = [];
  for (const [i, chunk] of chunks.entries()) {
    if (chunks.length > 1) options.onProgress?.(`reading part ${i + 1} of ${chunks.length}`);
    const answer = await ask(options.llm, chunk, options.signal);
    if (!answer.ok) return { status: 'failed', error: answer.error };
    const extracted = parseReflection(answer.text);
    if (!extracted) {
      return {
        status: 'failed',
        error: `the model's answer held no JSON object: ${answer.text.slice(0, 200)}`,
      };
    }
    found.push({ extracted, chunk });
  }
  const drafts = found.flatMap(({ extracted, chunk }) =>
    toProposals(extracted, chunk, sessionId, session.workspace),
  );
  const fresh = await withoutDuplicates(options, drafts, session.workspace);
  const dropped = found.reduce((n, f) => n + f.extracted.dropped, 0);
  const written = await proposals.recordReflection(sessionId, options.llm.model, fresh, span);
  // Undefined: another process reflected on it meanwhile, and its mark is there to read.
  if (!written) return { status: 'already', at: (await proposals.reflectedAt(sessionId))! };
  const notes: string[] = [];
  let accepted = 0;
  if (options.autoAccept) {
    for (const proposal of written) {
      const result = await acceptProposal(options.memory, proposal, {
        skillsDir: options.skillsDir,
      });
      if (result.ok) accepted++;
      else notes.push(`proposal ${proposal.id} waits for review: ${result.error}`);
    }
  }
  return { status: 'reflected', proposals: written, accepted, dropped, notes };
}

async function ask(
  llm: LlmClient,
  chunk: TranscriptLine[],
  signal: AbortSignal | undefined,
): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  const session = chunk.map((line) => line.text).join('\n');
  for await (const event of llm.stream({
    messages: [
      { role: 'system', content: REFLECTION_SYSTEM },
      { role: 'user', content: `<session>\n${session}\n</session>\n\n${REFLECTION_INSTRUCTIONS}` },
    ],
    signal,
  })) {
    if (event.type === 'error') return { ok: false, error: event.error.message };
    if (event.type === 'done') return { ok: true, text: event.message.content ?? '' };
  }
  return { ok: false, error: 'the model stream ended without an answer' };
}

function toProposals(
  extracted: Extracted,
  chunk: TranscriptLine[],
  sessionId: string,
  workspace: string,
): NewProposal[] {
  const seqs = new Set(chunk.map((line) => line.seq));
  const last = chunk.at(-1)!.seq;
  // A cited message outside this chunk is a slip: the chunk's last message is the best link left.
  const cite = (seq: number | undefined) => (seq !== undefined && seqs.has(seq) ? seq : last);
  const base = { sessionId, workspace };
  return [
    ...extracted.knowledge.map((k) => ({
      ...base,
      kind: k.kind,
      workspace: k.scope === 'user' ? null : workspace,
      text: k.text,
      detail: {},
      messageSeq: cite(k.message),
    })),
    ...extracted.learnings.map((l) => ({
      ...base,
      kind: 'learning' as const,
      text: `${stripStop(l.correction)} (not: ${stripStop(l.mistake)})`,
      detail: l.evidence ? { evidence: l.evidence } : {},
      messageSeq: cite(l.message),
    })),
    ...extracted.skills.flatMap((s) => {
      const name = skillName(s.name);
      if (!name) return [];
      const steps = typeof s.steps === 'string' ? s.steps.split(/\n+/).filter((x) => x.trim()) : s.steps;
      return [
        {
          ...base,
          kind: 'skill' as const,
          text: s.description,
          detail: { skill: { name, description: s.description, steps } },
          messageSeq: cite(s.message),
        },
      ];
    }),
  ];
}

function stripStop(text: string): string {
  return text.replace(/[.\s]+$/, '');
}

/** Drops drafts that repeat a stored memory (by text, words or meaning), a pending proposal, or an earlier draft. */
async function withoutDuplicates(
  options: ReflectOptions,
  drafts: NewProposal[],
  workspace: string,
): Promise<NewProposal[]> {
  const view = { workspace };
  const kept: NewProposal[] = [];
  const pending = await options.memory.store.proposals.pending(view);
  for (const draft of drafts) {
    if (kept.some((k) => sayTheSame(k.text, draft.text))) continue;
    if (pending.some((p) => normalizeText(p.text) === normalizeText(draft.text))) continue;
    const embedded = await options.memory.search.embedOne(draft.text, options.signal);
    if (await options.memory.findDuplicate(draft.text, embedded, view)) continue;
    kept.push(draft);
  }
  return kept;
}
