/**
 * One writer per session on the default SQLite set-up, with real processes on one Hearth home: a
 * `hearth --resume` of a session another `hearth` runs is refused, saying which process runs it
 * and what to do, and adds nothing; once that process is SIGKILLed the session is taken over at
 * once (its lease had most of its 30 s left). A `hearth serve` on the same file refuses the
 * terminal a session it runs, and shows a session the terminal runs read-only, naming its pid.
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { openDatabase } from '../../src/store/sqlite/database.js';
import { type CliRun, servedAt } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { openSocket } from '../support/gateway.js';
import { atPrompt } from '../support/pty.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('lease');
const MODEL = { HEARTH_MODEL: 'm' };

/** The session a finished `--json` run made. */
function sessionOf(stdout: string): string {
  const events = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as AgentEvent);
  const started = events.find((e) => e.type === 'session');
  if (!started) throw new Error(`no session event in ${stdout}`);
  return started.id;
}

/** What the session database holds: the session's user messages, and its lease's expiry. */
function stored(sessionId: string): { asked: string[]; leaseExpires?: number } {
  const db = openDatabase(join(cli.hearthHome, 'hearth.db'));
  try {
    const asked = db
      .prepare("SELECT body FROM messages WHERE session_id = ? AND role = 'user' ORDER BY seq")
      .all(sessionId)
      .map((row) => (JSON.parse((row as { body: string }).body) as { content: string }).content);
    const lease = db.prepare('SELECT expires_at FROM session_leases WHERE session_id = ?').get(sessionId) as
      | { expires_at: number }
      | undefined;
    return { asked, ...(lease ? { leaseExpires: lease.expires_at } : {}) };
  } finally {
    db.close();
  }
}

async function killed(run: CliRun): Promise<void> {
  run.child.kill('SIGKILL');
  await run.result;
}

describe('one session, two hearth processes on one SQLite file', () => {
  it('refuses the second while the first runs, and lets it take over at once when the first was killed', async () => {
    await cli.serve({
      models: ['m'],
      turns: [
        reply().text('Started.'),
        reply().text('Still thinking about it, one moment.').chunkSize(5).holdAfter(2),
        reply().text('Taken over at once.'),
      ],
    });
    const first = await cli.run(['--json', 'start'], { env: MODEL });
    expect(first.code, first.stderr).toBe(0);
    const id = sessionOf(first.stdout);

    const running = cli.start(['--resume', id, 'think it over'], { env: MODEL });
    await cli.server.waitForHolds(1);

    const second = await cli.run(['--resume', id, 'me too'], { env: MODEL });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `Session ${id} is running in hearth on ${hostname()} (pid ${running.child.pid}) right now, so it was not run here and nothing was added to it.`,
    );
    expect(second.stderr).toContain(`hearth sessions fork ${id}`);
    expect(stored(id).asked).toEqual(['start', 'think it over']);
    // Nor is it deleted from under the run.
    const removal = await cli.run(['sessions', 'rm', id]);
    expect(removal.code).toBe(1);
    expect(removal.stderr).toContain(
      `Session ${id} is running in hearth on ${hostname()} (pid ${running.child.pid}) right now, so it was not deleted.`,
    );
    expect(stored(id).asked).toEqual(['start', 'think it over']);
    // The refused processes asked the model nothing.
    expect(cli.server.requests).toHaveLength(2);

    await killed(running);
    // The dead holder's lease has most of its length left: only its process is gone.
    expect(stored(id).leaseExpires).toBeGreaterThan(Date.now());
    const third = await cli.run(['--resume', id, 'me now'], { env: MODEL });
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toBe('Taken over at once.\n');
    expect(stored(id)).toEqual({ asked: ['start', 'think it over', 'me now'] });
  });

  it('lets a REPL left open go on from what another process added to its session meanwhile', async () => {
    await cli.serve({
      models: ['m'],
      turns: [
        reply().text('Started.'),
        reply().text('Answered elsewhere.'),
        reply().text('Answered in the REPL.'),
      ],
    });
    const first = await cli.run(['--json', 'start'], { env: MODEL });
    const id = sessionOf(first.stdout);
    const term = cli.terminal(['--resume', id], { env: MODEL });
    await term.waitFor(atPrompt);

    const other = await cli.run(['--resume', id, 'from elsewhere'], { env: MODEL });
    expect(other.code, other.stderr).toBe(0);
    expect(await term.enter('from the REPL')).toContain('Answered in the REPL.');
    const sent = cli.server.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(sent.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual([
      'start',
      'Started.',
      'from elsewhere',
      'Answered elsewhere.',
      'from the REPL',
    ]);
  });
});

describe('hearth serve and the terminal on one SQLite file', () => {
  /** Starts `hearth serve`, with its URL and the token it keeps in its state file. */
  async function serve(): Promise<{ run: CliRun; url: string; auth: Record<string, string> }> {
    const run = cli.start(['serve', '--port', '0', '--no-scheduler'], { env: MODEL });
    const { url } = await servedAt(run);
    const state = JSON.parse(await readFile(join(cli.hearthHome, 'gateway.json'), 'utf8')) as {
      token: string;
    };
    return { run, url, auth: { authorization: `Bearer ${state.token}` } };
  }

  it('refuses the terminal a session the gateway runs, and shows one the terminal runs read-only', async () => {
    await cli.serve({
      models: ['m'],
      turns: [
        reply().text('Started in the terminal.'),
        reply().text('The gateway is answering slowly.').chunkSize(5).holdAfter(2),
        reply().text('The terminal is answering slowly.').chunkSize(5).holdAfter(2),
        reply().text('The gateway took it over.'),
      ],
    });
    const first = await cli.run(['--json', 'start'], { env: MODEL });
    expect(first.code, first.stderr).toBe(0);
    const id = sessionOf(first.stdout);
    const gateway = await serve();
    const post = (message: string) =>
      fetch(`${gateway.url}/api/chat/${id}`, {
        method: 'POST',
        headers: { ...gateway.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      });

    // The gateway runs a turn: the terminal is refused, and told by whom.
    const answering = post('from the browser');
    await cli.server.waitForHolds(1);
    const refused = await cli.run(['--resume', id, 'from the terminal'], { env: MODEL });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `Session ${id} is running in hearth serve on ${hostname()} (pid ${gateway.run.child.pid}) right now`,
    );
    cli.server.release();
    expect((await answering).status).toBe(200);

    // The terminal runs a turn: the gateway shows the session, read-only, naming the process.
    const terminal = cli.start(['--resume', id, 'from the terminal, again'], { env: MODEL });
    await cli.server.waitForHolds(2);
    const busy = await post('from the browser, again');
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { detail: string }).detail).toContain(
      `runs in hearth on ${hostname()} (pid ${terminal.child.pid})`,
    );
    const socket = await openSocket(`${gateway.url.replace('http', 'ws')}/ws/${id}?since=0`, gateway.auth);
    const hello = await socket.next((m) => m.type === 'connected');
    expect(hello.runs_at).toBe(`hearth on ${hostname()} (pid ${terminal.child.pid})`);
    // The terminal's turn is under way: the greeting says so, not that the session is at rest.
    expect(hello.running).toBe(true);
    socket.ws.terminate();
    const history = (await (
      await fetch(`${gateway.url}/api/sessions/${id}/history`, { headers: gateway.auth })
    ).json()) as { messages: Array<{ role: string; content: string }> };
    // What the terminal's run committed so far (its task) is there to read.
    expect(history.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'start',
      'from the browser',
      'from the terminal, again',
    ]);

    // The terminal is killed mid-answer: the gateway takes the session over at once.
    await killed(terminal);
    const taken = await post('take over');
    expect(taken.status).toBe(200);
    expect(((await taken.json()) as { text: string }).text).toBe('The gateway took it over.');
    // The gateway's model saw the terminal's message too: it read the history the terminal left.
    // The killed run left that message unanswered, so it goes with the next as one user turn
    // (roles alternate, as strict chat templates demand); what is stored stays as it was.
    const asked = cli.server.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(asked.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'start',
      'from the browser',
      'from the terminal, again\n\ntake over',
    ]);
    expect(stored(id).asked).toEqual(['start', 'from the browser', 'from the terminal, again', 'take over']);
  });
});
