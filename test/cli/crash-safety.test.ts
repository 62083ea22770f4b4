/**
 * Crash safety: a real `hearth --yolo` run is SIGKILLed at a pseudo-random moment (startup,
 * mid-stream, mid-tool, between turns, after the end), 20 times; three of those kills wait for an
 * event (a held stream, a running command) so they land in their phase on any machine. Every time
 * the database must pass `PRAGMA integrity_check`, hold the session with contiguous messages, and
 * `hearth --resume` must carry on from exactly what was committed, with a history a server accepts.
 *
 * Reproduce a failure with the seed in the test name: HEARTH_CRASH_SEED=<seed> npx vitest run <this file>.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alternating } from '../../src/llm/alternation.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { type CliResult, runCli, startCli } from '../support/cli.js';
import {
  reply,
  type ScriptedServer,
  startScriptedServer,
  type TurnInput,
} from '../support/scripted-server.js';
import { seededRandom } from '../support/seeded-random.js';
import { historyProblems, withPeek } from '../support/store-peek.js';
import { waitUntil } from '../support/wait.js';

const SEED = Number(process.env.HEARTH_CRASH_SEED ?? 0x5eed) >>> 0;
const RUNS = 20;
const TASK = 'write notes.txt, check it and read it back';
const FINAL = 'Carried on: everything is in place.';

interface KillPlan {
  /**
   * `spawn` reaches into start-up (database creation, session row, first commits); `first request`
   * into the run. `held` kills while the server holds turn `turn` mid-stream, `tool` while turn 2's
   * shell command runs: those land where they aim on any machine, however loaded.
   */
  anchor: 'spawn' | 'first request' | 'held' | 'tool';
  ms: number;
  turn?: number;
  /** Where an anchored kill must land (see phaseOf). */
  phase?: string;
}

// Start-up takes ~0.5 s before the first request (the database is opened near its end); the scripted
// run then lasts ~0.9 s. The windows cover all of it and a little after the end, where the kill
// finds a process that already exited. Three runs are anchored on events instead, so the phases that
// matter most are covered every time, not only when the timing happens to fall there.
const random = seededRandom(SEED);
const anchored: Record<number, KillPlan> = {
  4: { anchor: 'held', ms: 0, turn: 1, phase: 'mid-stream (turn 1)' },
  9: { anchor: 'tool', ms: 0, phase: 'mid-tool (turn 2)' },
  14: { anchor: 'held', ms: 0, turn: 3, phase: 'mid-stream (turn 3)' },
};
const plans: KillPlan[] = Array.from({ length: RUNS }, (_, i) => {
  const timed: KillPlan =
    random() < 0.2
      ? { anchor: 'spawn', ms: 150 + Math.floor(random() * 500) }
      : { anchor: 'first request', ms: Math.floor(random() * 1200) };
  return anchored[i] ?? timed;
});

const TOOL_RUNNING = '.tool-running';

/** Four turns: text and a write, a slow shell command, two calls at once, the answer. Small delays
 * stretch each phase so kills land mid-stream, mid-tool and between turns. An anchored plan holds
 * its turn mid-stream, or makes the shell command mark that it runs and wait to be killed. */
function crashScript(plan: KillPlan): TurnInput[] {
  const command =
    plan.anchor === 'tool'
      ? `touch ${TOOL_RUNNING} && echo start && sleep 60 && echo end`
      : 'echo start && sleep 0.2 && echo end';
  const turns = [
    reply()
      .text('Writing the notes first.')
      .tool('write_file', { path: 'notes.txt', content: 'one\ntwo\n' })
      .delayFirstByte(30)
      .delayBetweenChunks(8),
    reply().tool('shell', { command }).delayFirstByte(20).delayBetweenChunks(8),
    reply()
      .text('Reading it back and counting.')
      .tool('read_file', { path: 'notes.txt' })
      .tool('shell', { command: 'sleep 0.1; wc -l < notes.txt' })
      .delayFirstByte(40)
      .delayBetweenChunks(8),
    reply().text('Done: notes.txt has two lines.').delayBetweenChunks(8),
  ];
  if (plan.anchor === 'held') turns[plan.turn! - 1]!.holdAfter(3);
  return turns;
}

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** Ids of the last assistant message's calls that have no result yet, in call order. */
function unansweredIds(messages: ChatMessage[]): string[] {
  const at = messages.findLastIndex((m) => m.role === 'assistant');
  const assistant = messages[at];
  if (assistant?.role !== 'assistant') return [];
  const answered = new Set(
    messages.slice(at + 1).flatMap((m) => (m.role === 'tool' ? [(m as ToolMessage).tool_call_id] : [])),
  );
  return (assistant.tool_calls ?? []).map((c) => c.id).filter((id) => !answered.has(id));
}

/** Where the kill landed, read from what was committed (for the log and the coverage check). */
function phaseOf(committed: ChatMessage[], exited: CliResult, requestsSent: number): string {
  if (exited.code === 0) return 'after the run ended';
  const last = committed.at(-1);
  const answers = committed.filter((m) => m.role === 'assistant').length;
  if (!last) return 'session row, no message';
  if (last.role === 'system') return 'system prompt committed';
  if (last.role === 'user') return requestsSent > 0 ? 'mid-stream (turn 1)' : 'task committed, no request';
  if (last.role === 'assistant' && !last.tool_calls?.length) return 'final answer committed';
  if (unansweredIds(committed).length > 0) return `mid-tool (turn ${answers})`;
  return requestsSent > answers
    ? `mid-stream (turn ${answers + 1})`
    : `between turns ${answers} and ${answers + 1}`;
}

// One shared database for all 20 runs (fresh workspaces, one HEARTH_HOME): each kill then lands on
// a file that has already survived earlier kills, which is how a real ~/.hearth/hearth.db lives, and
// every run also checks that sessions committed by earlier runs are untouched. Run 1 starts from no
// file, so early kills there hit database creation and the first migration.
let root: string;
let hearthHome: string;
let dbPath: string;
const servers: ScriptedServer[] = [];
/** Sessions whose resume finished, with their messages then: later crashes must not touch them. */
const settled = new Map<string, ChatMessage[]>();
const phases: string[] = [];

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'hearth-crash-')));
  hearthHome = join(root, 'home', '.hearth');
  await mkdir(hearthHome, { recursive: true });
  dbPath = join(hearthHome, 'hearth.db');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  const counts = new Map<string, number>();
  for (const p of phases) counts.set(p, (counts.get(p) ?? 0) + 1);
  console.log(`crash-safety seed ${SEED}: ${[...counts].map(([p, n]) => `${p} ×${n}`).join(', ')}`);
  await rm(root, { recursive: true, force: true });
});

async function serve(turns: TurnInput[]): Promise<ScriptedServer> {
  const server = await startScriptedServer({ models: ['m'], turns });
  servers.push(server);
  return server;
}

function envFor(server: ScriptedServer): Record<string, string> {
  return { HOME: join(root, 'home'), HEARTH_HOME: hearthHome, HEARTH_BASE_URL: server.baseUrl };
}

function knownSessions(): string[] {
  if (!existsSync(dbPath)) return [];
  return withPeek(dbPath, (peek) => (peek.hasSchema() ? peek.sessions().map((s) => s.id) : []));
}

/** Starts the run and SIGKILLs it as planned; resolves once the process is gone. */
async function runAndKill(plan: KillPlan, server: ScriptedServer, workspace: string) {
  const run = startCli(['--yolo', TASK], { cwd: workspace, env: envFor(server) });
  let gone = false;
  const result = run.result.then((r) => {
    gone = true;
    return r;
  });
  if (plan.anchor === 'first request') await Promise.race([server.waitForRequests(1), result]);
  if (plan.anchor === 'held') await Promise.race([server.waitForHolds(1), result]);
  if (plan.anchor === 'tool') {
    const marker = join(workspace, TOOL_RUNNING);
    await Promise.race([waitUntil(() => existsSync(marker), 'the shell command to start'), result]);
  }
  await Promise.race([sleep(plan.ms), result]);
  if (!gone) run.child.kill('SIGKILL');
  return result;
}

describe(`crash safety: SIGKILL at random points (seed ${SEED}, ${RUNS} runs, one shared database)`, () => {
  plans.forEach((plan, index) => {
    const when = plan.phase ? plan.phase : `${plan.ms} ms after ${plan.anchor}`;
    it(`run ${index + 1}/${RUNS}: SIGKILL ${when} (seed ${SEED})`, async () => {
      const workspace = await mkdtemp(join(root, 'ws-'));
      const before = knownSessions();
      const crashServer = await serve(crashScript(plan));

      const exited = await runAndKill(plan, crashServer, workspace);
      // Killed (code null), or it finished first: it must never fail on its own.
      expect([null, 0], exited.stderr).toContain(exited.code);
      await crashServer.close();

      if (!existsSync(dbPath)) {
        // Killed before the database was created: nothing to open, and nothing was promised.
        expect(crashServer.requests).toHaveLength(0);
        phases.push('before the database existed');
        return;
      }
      const found = withPeek(dbPath, (peek) => {
        const sessions = peek.hasSchema() ? peek.sessions() : [];
        const mine = sessions.filter((s) => !before.includes(s.id));
        return {
          integrity: peek.integrity(),
          mine,
          earlier: [...settled.keys()].map((id) => [id, peek.messages(id)] as const),
          committed: mine[0] ? peek.messages(mine[0].id) : [],
          seqs: mine[0] ? peek.seqs(mine[0].id) : [],
        };
      });
      expect(found.integrity).toBe('ok');
      for (const [id, messages] of found.earlier) expect(messages, `session ${id}`).toEqual(settled.get(id));
      expect(found.mine.length).toBeLessThanOrEqual(1);

      const session = found.mine[0];
      if (!session) {
        // Killed before the session row: the database must still open and work for the CLI.
        expect(crashServer.requests).toHaveLength(0);
        phases.push('before the session row');
        const listed = await runCli(['sessions', '--all'], { cwd: workspace, env: envFor(crashServer) });
        expect(listed.code, listed.stderr).toBe(0);
        expect(withPeek(dbPath, (peek) => peek.integrity())).toBe('ok');
        return;
      }

      const { committed } = found;
      const phase = phaseOf(committed, exited, crashServer.requests.length);
      phases.push(phase);
      if (plan.phase) expect(phase, 'an anchored kill lands where it aims').toBe(plan.phase);
      expect(session.workspace).toBe(workspace);
      expect(found.seqs, 'message seqs are contiguous').toEqual(committed.map((_, k) => k));
      if (committed.length > 0) expect(committed[0]!.role).toBe('system');
      // Everything the killed run had sent was committed before it was sent: none of it was lost.
      const lastSent = crashServer.requests.at(-1)?.body.messages as ChatMessage[] | undefined;
      if (lastSent) expect(committed.slice(0, lastSent.length)).toEqual(lastSent);
      if (exited.code === 0) expect(committed.at(-1)).toMatchObject({ role: 'assistant' });

      // Interrupted mid-tool or between turns: carry on with no new task. Otherwise (nothing done
      // yet, or the task finished) program.ts wants one, so say what to do.
      const last = committed.at(-1);
      const carryOn = last?.role === 'tool' || (last?.role === 'assistant' && !!last.tool_calls?.length);
      const interrupted = unansweredIds(committed);
      const resumeServer = await serve([reply().text(FINAL)]);
      const resumed = await runCli(['--resume', session.id, '--yolo', ...(carryOn ? [] : ['carry on'])], {
        cwd: workspace,
        env: envFor(resumeServer),
      });
      expect(resumed.code, `phase: ${phase}\n${resumed.stderr}`).toBe(0);
      expect(resumed.stdout).toContain(FINAL);
      expect(resumeServer.requests).toHaveLength(1);

      // The resumed history starts with what was committed; it is sent with user and assistant
      // taking turns (a task the kill left unanswered is merged with the next).
      const history = [
        ...committed,
        ...interrupted.map((id) => ({
          role: 'tool' as const,
          tool_call_id: id,
          content: expect.stringMatching(/^Error: Interrupted/),
        })),
        ...(carryOn ? [] : [{ role: 'user' as const, content: 'carry on' }]),
      ];
      const sent = resumeServer.requests[0]!.body.messages as ChatMessage[];
      expect(sent).toEqual(alternating(history));
      expect(historyProblems(sent), 'every tool call has its result').toEqual([]);

      const afterResume = withPeek(dbPath, (peek) => ({
        integrity: peek.integrity(),
        messages: peek.messages(session.id),
        status: peek.sessions().find((s) => s.id === session.id)?.status,
      }));
      expect(afterResume.integrity).toBe('ok');
      expect(afterResume.messages.slice(0, history.length)).toEqual(history);
      expect(afterResume.messages.slice(history.length)).toEqual([
        expect.objectContaining({ role: 'assistant', content: FINAL }),
      ]);
      expect(afterResume.status).toBe('completed');
      settled.set(session.id, afterResume.messages);
    });
  });
});
