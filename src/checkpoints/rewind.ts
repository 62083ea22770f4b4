/**
 * Rewind and undo as every surface offers them (the CLI, the REPL, the gateway, the library): the
 * turns of a session to pick from, what going back would change, and doing it. Code goes back
 * through the checkpoint store; the conversation goes back as a fork, so nothing is lost.
 */
import type { ChatMessage } from '../llm/types.js';
import type { SessionRow } from '../store/rows.js';
import type { SessionStorage } from '../store/session-storage.js';
import type { RewindPlan } from './store.js';
import { CheckpointStore } from './store.js';

/** A turn of a session as the user picks it: numbered from 1, with its task. */
export interface TurnInfo {
  number: number;
  /** The seq of the turn's first message. */
  seq: number;
  label: string;
  /** Whether a checkpoint was kept before its changes (it changed files). */
  changedFiles: boolean;
}

export type CodePlan = { plan: RewindPlan } | { nothing: string };

type Opened = CheckpointStore | { off: string };

export class Rewinder {
  private readonly stores = new Map<string, Opened>();

  /** `open` gives the checkpoint store of a workspace (`openCheckpoints` with the home and settings). */
  constructor(
    readonly sessions: SessionStorage,
    private readonly open: (workspace: string) => Opened,
  ) {}

  /**
   * The session meant when none is named: the one whose files changed last in `workspace` (a turn
   * or a rewind), else the last one started there.
   */
  async sessionIn(workspace: string): Promise<string | undefined> {
    const store = this.storeFor(workspace);
    const last = store instanceof CheckpointStore ? (await store.entries()).at(-1) : undefined;
    return last?.session ?? (await this.sessions.latest(workspace))?.id;
  }

  /** The checkpoint store of the session's workspace. */
  private async storeOf(sessionId: string): Promise<Opened> {
    return this.storeFor((await this.sessions.get(sessionId)).workspace);
  }

  private storeFor(workspace: string): Opened {
    let store = this.stores.get(workspace);
    if (!store) {
      store = this.open(workspace);
      this.stores.set(workspace, store);
    }
    return store;
  }

  /** The session's turns, oldest first. */
  async turns(sessionId: string): Promise<TurnInfo[]> {
    const messages = await this.sessions.messages(sessionId);
    const store = await this.storeOf(sessionId);
    const entries = store instanceof CheckpointStore ? await store.entries(sessionId) : [];
    const kept = new Map(entries.filter((e) => e.kind === 'turn').map((e) => [e.seq, e.label]));
    const turns: TurnInfo[] = [];
    messages.forEach((message, seq) => {
      if (!isTurnStart(message, messages[seq - 1])) return;
      const label = kept.get(seq) || firstLine(message.content);
      turns.push({ number: turns.length + 1, seq, label, changedFiles: kept.has(seq) });
    });
    return turns;
  }

  /** The turn numbered `number`; rejects naming the range when there is none. */
  async turn(sessionId: string, number: number): Promise<TurnInfo> {
    const turns = await this.turns(sessionId);
    const found = turns[number - 1];
    if (!found || !Number.isInteger(number)) {
      throw new RangeError(
        turns.length === 0
          ? `session ${sessionId} has no turns yet`
          : `no turn ${number} in session ${sessionId}: its turns are 1 to ${turns.length}`,
      );
    }
    return found;
  }

  /** What putting the files back to before turn `number` (or, with 'undo', undoing the last step) would do. */
  async planCode(sessionId: string, target: number | 'undo'): Promise<CodePlan> {
    const store = await this.storeOf(sessionId);
    if (!(store instanceof CheckpointStore)) return { nothing: store.off };
    if (target === 'undo') {
      const plan = await store.planUndo(sessionId);
      return plan ? { plan } : { nothing: `session ${sessionId} changed no files that a checkpoint kept` };
    }
    const turn = await this.turn(sessionId, target);
    const plan = await store.planRewind(sessionId, turn.seq, `${turn.number}: ${turn.label}`);
    return plan ? { plan } : { nothing: `no files changed since turn ${turn.number} began` };
  }

  /** Puts the files back as planned; the tree before is kept, so this can be undone too. */
  async applyCode(plan: RewindPlan): Promise<void> {
    const store = await this.storeOf(plan.session);
    if (!(store instanceof CheckpointStore)) throw new Error(store.off);
    await store.apply(plan);
  }

  /** A new session holding the conversation up to the start of turn `number`; the original stays. */
  async forkChat(sessionId: string, number: number): Promise<SessionRow> {
    const turn = await this.turn(sessionId, number);
    return this.sessions.fork(sessionId, { before: turn.seq });
  }
}

/**
 * A user message a person sent: not the note carrying tool images (it follows a tool result),
 * not one of a sub-agent's brief wrappers; the system prompt is never one.
 */
function isTurnStart(message: ChatMessage, previous: ChatMessage | undefined): boolean {
  return message.role === 'user' && previous?.role !== 'tool';
}

function firstLine(content: ChatMessage['content']): string {
  const text = typeof content === 'string' ? content : '';
  return text.replace(/\s+/g, ' ').trim().slice(0, 80);
}
