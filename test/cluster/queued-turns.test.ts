/**
 * `gateway.turns: workers`: a `hearth serve` queues each turn to `hearth worker`s through the
 * shared PostgreSQL database, and behaves as if it ran it itself. Real parts: a private
 * PostgreSQL, the scripted model server, a gateway process and worker processes (each with its own
 * Hearth home, as on other machines, sharing only the database and the workspace folder).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/cluster/turn-queue.js';
import { type CliRun, startCli } from '../support/cli.js';
import { openSocket, type TestSocket, type WireMessage } from '../support/gateway.js';
import { machineEnv, postgresBin, startPostgres, type TestPostgres } from '../support/postgres.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';
import {
  startWorkerProcess,
  untilServing,
  untilWorkersStart,
  type WorkerProcess,
} from '../support/workers.js';

const TOKEN = 'queued-turns-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

describe.skipIf(!postgresBin())('gateway turns queued to hearth workers', () => {
  let db: TestPostgres;
  let llm: ScriptedServer;
  let sql: pg.Pool;
  let workspace: string;
  let url: string;
  let watcher: TestSocket;
  const dirs: string[] = [];
  const running: CliRun[] = [];
  const workers: WorkerProcess[] = [];
  /** The key of a turn made old by the first test. */
  let oldTurn = '';

  /** A machine's environment: its own Hearth home, with `config` as its user settings. */
  function machine(config: object = {}): Record<string, string> {
    const home = mkdtempSync(join(tmpdir(), 'hearth-turns-home-'));
    dirs.push(home);
    mkdirSync(join(home, '.hearth'), { recursive: true });
    writeFileSync(join(home, '.hearth', 'config.json'), JSON.stringify(config));
    return machineEnv(home, db.url, llm.baseUrl);
  }

  function worker(): WorkerProcess {
    // Approvals wait 5 s on the workers (the gateway's own setting is not theirs).
    const env = machine({ gateway: { approval_timeout: 5 } });
    const run = startWorkerProcess(['--lease', '3', '--no-pipeline'], { cwd: workspace, env });
    running.push(run);
    workers.push(run);
    return run;
  }

  async function serve(): Promise<string> {
    // The gateway's own model is blind; the workers' may see: images are theirs to judge.
    const env = machine({ gateway: { turns: 'workers', approval_timeout: 60 }, vision: false });
    const run = startCli(['serve', '--port', '0', '--token', TOKEN, '--no-scheduler'], {
      cwd: workspace,
      env,
    });
    running.push(run);
    return untilServing(run);
  }

  const post = (path: string, body: object) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** Waits until the worker running the turn has taken the steer `text` sent through a gateway. */
  const steerTaken = (text: string) =>
    waitUntil(async () => {
      const applied = await sql.query(
        `select 1 from hearth_turn_orders where body->>'text' = $1 and applied_at is not null`,
        [text],
      );
      return applied.rowCount === 1;
    }, `the worker to take the steer "${text}"`);

  /** The events the watcher got from index `from` on, up to and including the next `done`. */
  async function turnEvents(from: number): Promise<WireMessage[]> {
    await watcher.next((m) => m.type === 'done', from);
    const events = watcher.messages.slice(from);
    return events.slice(0, events.findIndex((m) => m.type === 'done') + 1);
  }

  beforeAll(async () => {
    db = await startPostgres();
    llm = await startScriptedServer({ models: ['scripted-model'] });
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-turns-ws-')));
    writeFileSync(join(workspace, 'notes.txt'), 'the kettle is on\n');
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    sql.on('error', () => undefined); // an idle connection the server ends at its stop
    url = await serve();
    const created = await post('/api/sessions', { id: 's1' });
    expect(created.status).toBe(201);
    watcher = await openSocket(`${url.replace(/^http/, 'ws')}/ws/s1?since=0`, auth);
    await watcher.next((m) => m.type === 'connected');
  }, 60_000);

  afterAll(async () => {
    watcher?.ws.terminate();
    for (const run of running) run.child.kill('SIGKILL');
    await Promise.all(running.map((run) => run.result));
    await sql?.end();
    await llm?.close();
    await db?.stop();
    for (const dir of [workspace, ...dirs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('takes back a message stopped before any worker took it up, so it never runs', async () => {
    await post('/api/sessions', { id: 'gone' });
    const seen = await openSocket(`${url.replace(/^http/, 'ws')}/ws/gone?since=0`, auth);
    try {
      const answer = post('/api/chat/gone', { message: 'never mind' });
      await seen.next((m) => m.type === 'warning');
      const stopped = await post('/api/sessions/gone/abort', {});
      expect(await stopped.json()).toEqual({ session_id: 'gone', aborted: true });
      const response = await answer;
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ session_id: 'gone', text: '', reason: 'aborted' });
      expect(await seen.next((m) => m.type === 'done')).toMatchObject({ reason: 'aborted', iterations: 0 });
      const turns = await sql.query('select key, started_at from hearth_turns where session_id = $1', [
        'gone',
      ]);
      expect(turns.rows).toEqual([{ key: expect.any(String), started_at: null }]);
      const jobs = await sql.query('select count(*)::int as n from graphile_worker.jobs where key = $1', [
        turns.rows[0].key,
      ]);
      expect(jobs.rows[0].n).toBe(0);

      // Stopped at once, maybe while the gateway still queues it: the same.
      const again = post('/api/chat/gone', { message: 'no, really' });
      await waitUntil(
        () =>
          fetch(`${url}/api/sessions/gone`, { headers: auth }).then(
            async (r) => ((await r.json()) as { running: boolean }).running,
          ),
        'the message to run',
      );
      expect(await (await post('/api/sessions/gone/abort', {})).json()).toMatchObject({ aborted: true });
      expect(await (await again).json()).toMatchObject({ reason: 'aborted' });
    } finally {
      seen.ws.terminate();
    }
  }, 60_000);

  it('says so when no worker is there to take a turn, and runs it once one starts', async () => {
    await post('/api/sessions', { id: 's0' });
    const alone = await openSocket(`${url.replace(/^http/, 'ws')}/ws/s0?since=0`, auth);
    try {
      llm.push(reply().text('Taken up at last.'));
      const answer = post('/api/chat/s0', { message: 'anyone there?' });
      const warning = await alone.next((m) => m.type === 'warning');
      expect(warning.message).toBe(
        'No hearth worker is running: this turn waits in the queue until one starts (hearth worker).',
      );
      const taker = worker();
      await untilWorkersStart([taker], 30_000);
      const response = await answer;
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ text: 'Taken up at last.', reason: 'completed' });
      // Gone again, so the tests below know which worker runs their turns.
      taker.child.kill('SIGTERM');
      await taker.result;
      workers.splice(workers.indexOf(taker), 1);
      // As if it finished two days ago: the next worker forgets it (checked in the next test).
      const old = await sql.query(
        `update hearth_turns set finished_at = now() - interval '2 days' where session_id = 's0' returning key`,
      );
      oldTurn = old.rows[0].key;
    } finally {
      alone.ws.terminate();
    }
  }, 90_000);

  it('runs a message in a worker, streams its events live and answers with its result', async () => {
    const first = worker();
    await untilWorkersStart([first], 30_000);
    llm.push(
      reply().tool('read_file', { path: 'notes.txt' }),
      // Held mid-answer: the gateway's watcher has the worker's first events before the turn ends.
      reply().text('The notes say the kettle is on.').chunkSize(6).holdAfter(2),
    );
    const from = watcher.messages.length;
    const answer = post('/api/chat/s1', { message: 'What do the notes say?' });

    await llm.waitForHolds(1);
    await watcher.next((m) => m.type === 'tool_result', from);
    // The worker runs it: it holds the session's run lease, and wrote the events.
    const lease = await sql.query('select label, pid from hearth_session_leases where session_id = $1', [
      's1',
    ]);
    expect(lease.rows[0]).toMatchObject({
      label: expect.stringMatching(/^hearth worker on /),
      pid: first.child.pid,
    });
    const head = await sql.query('select writer from hearth_event_heads where session_id = $1', ['s1']);
    expect(head.rows[0].writer).toBe(lease.rows[0].label);
    expect(watcher.messages.slice(from).some((m) => m.type === 'done')).toBe(false);
    // A client joining now sees it running, and may drive it (no `runs_at`: no read-only view).
    const late = await openSocket(`${url.replace(/^http/, 'ws')}/ws/s1`, auth);
    const hello = await late.next((m) => m.type === 'connected');
    late.ws.terminate();
    expect(hello).toMatchObject({ running: true });
    expect(hello.runs_at).toBeUndefined();

    llm.release();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      session_id: 's1',
      text: 'The notes say the kettle is on.',
      reason: 'completed',
      model: 'scripted-model',
    });
    const events = await turnEvents(from);
    expect(events[0]).toMatchObject({ type: 'user_message', text: 'What do the notes say?' });
    expect(events.map((m) => m.type)).toContain('tool_call');
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed' });
    const seqs = events.map((m) => m.seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    const turn = await sql.query(
      'select worker, attempts, finished_at from hearth_turns where session_id = $1',
      ['s1'],
    );
    expect(turn.rows).toEqual([{ worker: lease.rows[0].label, attempts: 1, finished_at: expect.any(Date) }]);

    // A compaction goes the same way, and its reply comes back.
    const compacted = await post('/api/sessions/s1/compact', {});
    expect(compacted.status).toBe(200);
    expect(await compacted.json()).toMatchObject({ session_id: 's1', method: expect.any(String) });
    const compactions = await sql.query('select count(*)::int as n from hearth_turns where session_id = $1', [
      's1',
    ]);
    expect(compactions.rows[0].n).toBe(2);

    // A turn finished a day ago and more is forgotten, with its task and result, by a worker
    // taking a turn; s1's stay.
    const left = (table: string) =>
      sql.query(`select count(*)::int as n from ${table} where key = $1`, [oldTurn]).then((r) => r.rows[0].n);
    await waitUntil(async () => (await left('hearth_turns')) === 0, 'the old turn to be forgotten');
    expect([await left('hearth_tasks'), await left('hearth_task_results')]).toEqual([0, 0]);
    const queues = await sql.query(
      `select count(*)::int as n from graphile_worker._private_job_queues where queue_name = 'hearth_session:s0'`,
    );
    expect(queues.rows[0].n).toBe(0);
  }, 90_000);

  it('leaves it to the worker whether its model sees an image sent with a message', async () => {
    llm.push(reply().text('A single pixel.'));
    const pixel =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const response = await post('/api/chat/s1', {
      message: 'what is this?',
      images: [{ mime_type: 'image/png', data: pixel }],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ text: 'A single pixel.' });
    const asked = JSON.stringify(llm.requests.at(-1)!.body.messages);
    expect(asked).toContain('data:image/png;base64,');
  }, 60_000);

  it('carries on, in a worker, a run paused in the terminal once the gateway is given the answer', async () => {
    llm.push(
      reply().tool('write_file', { path: 'paused.txt', content: 'approved\n' }),
      reply().text('Resumed and wrote it.'),
    );
    const terminal = await startCli(['--json', '--pause-for-approval', 'write paused.txt'], {
      cwd: workspace,
      env: machine(),
    }).result;
    expect(terminal.code).toBe(3);
    const lines = terminal.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const session = String(lines.find((e) => e.type === 'session').id);
    const call = String(lines.at(-1).pending[0].id);

    const seen = await openSocket(`${url.replace(/^http/, 'ws')}/ws/${session}`, auth);
    try {
      const answered = await post(`/api/sessions/${session}/approvals/${call}`, { decision: 'once' });
      expect(answered.status).toBe(200);
      const done = await seen.next((m) => m.type === 'done');
      expect(done).toMatchObject({ text: 'Resumed and wrote it.', reason: 'completed' });
      expect(readFileSync(join(workspace, 'paused.txt'), 'utf8')).toBe('approved\n');
      // The worker's run found the answer waiting: it was not asked again, nor declined.
      expect(seen.messages.filter((m) => m.type === 'approval_resolved')).toEqual([
        expect.objectContaining({ tool_call_id: call, decision: 'once' }),
      ]);
    } finally {
      seen.ws.terminate();
    }
  }, 60_000);

  it('sends an approval given to the gateway on to the worker running the turn', async () => {
    llm.push(reply().tool('write_file', { path: 'out.txt', content: 'hi\n' }), reply().text('Written.'));
    const from = watcher.messages.length;
    watcher.send({ type: 'message', content: 'write hi to out.txt' });
    const asked = await watcher.next((m) => m.type === 'approval_request', from);
    expect(asked).toMatchObject({ tool: 'write_file' });
    // An answer to a call nobody asked about is refused here, as for a local turn.
    expect((await post('/api/sessions/s1/approvals/nope', { decision: 'once' })).status).toBe(404);
    const answered = await post(`/api/sessions/s1/approvals/${asked.tool_call_id}`, { decision: 'once' });
    expect(answered.status).toBe(200);
    const events = await turnEvents(from);
    expect(events.find((m) => m.type === 'approval_resolved')).toMatchObject({
      tool_call_id: asked.tool_call_id,
      approved: true,
      by: 'client',
    });
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed', text: 'Written.' });
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
  }, 60_000);

  it('declines a call nobody answers once the worker’s approval timeout passed', async () => {
    llm.push(reply().tool('write_file', { path: 'never.txt', content: 'no\n' }), reply().text('Left it.'));
    const from = watcher.messages.length;
    const answer = post('/api/chat/s1', { message: 'write no to never.txt' });
    const asked = await watcher.next((m) => m.type === 'approval_request', from);
    const resolved = await watcher.next((m) => m.type === 'approval_resolved', from);
    expect(resolved).toMatchObject({ tool_call_id: asked.tool_call_id, approved: false, by: 'timeout' });
    expect(await (await answer).json()).toMatchObject({ text: 'Left it.', reason: 'completed' });
    expect(existsSync(join(workspace, 'never.txt'))).toBe(false);
  }, 60_000);

  it('stops the worker’s turn when the gateway is told to abort', async () => {
    llm.push(reply().text('A very long answer that never ends').chunkSize(4).holdAfter(1));
    const from = watcher.messages.length;
    const answer = post('/api/chat/s1', { message: 'Tell me a long story.' });
    await llm.waitForHolds(2);
    // Steered in, then stopped before the run took it: it goes with the session's next turn.
    await post('/api/sessions/s1/messages', { message: 'keep it short', steer: true });
    await steerTaken('keep it short');
    const aborted = await post('/api/sessions/s1/abort', {});
    expect(await aborted.json()).toEqual({ session_id: 's1', aborted: true });
    await llm.waitForDisconnects(1);
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ reason: 'aborted' });
    const events = await turnEvents(from);
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'aborted' });

    llm.push(reply().text('Short it is.'));
    const next = await post('/api/chat/s1', { message: 'go on' });
    expect(await next.json()).toMatchObject({ text: 'Short it is.' });
    const said = (llm.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>)
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content));
    // The steer and the next message go as one user turn: the aborted turn left no reply between.
    expect(said.at(-1)).toMatch(/^keep it short\n\n[\s\S]*go on/);
  }, 60_000);

  it('hands a killed worker’s turn to another, which carries it on without repeating what was done', async () => {
    const [first] = workers;
    const second = worker();
    await untilWorkersStart([second], 30_000);
    llm.push(
      reply().text('Reading.').chunkSize(4).holdAfter(1).tool('read_file', { path: 'notes.txt' }),
      reply().text('The kettle').chunkSize(4).holdAfter(1),
      reply().text('The kettle is on, still.'),
    );
    const from = watcher.messages.length;
    const answer = post('/api/chat/s1', { message: 'Check the notes again.' });
    // A steer the first try takes and stores: the second try is handed it again and must not add it twice.
    await llm.waitForHolds(3);
    await post('/api/sessions/s1/messages', { message: 'and the time', steer: true });
    await steerTaken('and the time');
    llm.release();
    // The first worker (the only one that took turns so far) is mid-answer when it dies, after
    // what it did (the tool call) reached the shared log: its events are written in batches.
    await llm.waitForHolds(4);
    await watcher.next((m) => m.type === 'tool_call', from);
    const holder = await sql.query('select pid from hearth_session_leases where session_id = $1', ['s1']);
    const victim = workers.find((w) => w.child.pid === holder.rows[0].pid)!;
    const survivor = victim === first ? second : first!;
    victim.child.kill('SIGKILL');

    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ text: 'The kettle is on, still.', reason: 'completed' });
    const turn = await sql.query(
      `select worker, attempts from hearth_turns where session_id = $1 order by queued_at desc limit 1`,
      ['s1'],
    );
    expect(turn.rows[0]).toEqual({
      worker: expect.stringContaining(`(pid ${survivor.child.pid})`),
      attempts: 2,
    });
    // The message is stored once, and the read it led to ran once: the second worker carried on.
    const stored = await sql.query(
      `select role, body from hearth_messages where session_id = $1 order by seq`,
      ['s1'],
    );
    const bodies = stored.rows.map((r) => String(r.body));
    expect(bodies.filter((b) => b.includes('Check the notes again.'))).toHaveLength(1);
    expect(bodies.filter((b) => b.includes('and the time'))).toHaveLength(1);
    const asked = bodies.findIndex((b) => b.includes('Check the notes again.'));
    expect(stored.rows.slice(asked).filter((r) => r.role === 'tool')).toHaveLength(1);
    const events = await turnEvents(from);
    expect(events.filter((m) => m.type === 'user_message')).toHaveLength(1);
    expect(events.filter((m) => m.type === 'tool_call')).toHaveLength(1);
    expect(events.filter((m) => m.type === 'steer')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'done', text: 'The kettle is on, still.' });
  }, 120_000);

  it('queues a message behind the running one, and steers the running one through the gateway', async () => {
    llm.push(
      reply().text('Noted.').chunkSize(2).holdAfter(1),
      reply().text('Noted.'),
      reply().text('Noted.'),
    );
    const from = watcher.messages.length;
    const first = post('/api/chat/s1', { message: 'first' });
    await llm.waitForHolds(5);
    const second = await post('/api/sessions/s1/messages', { message: 'second' });
    expect(await second.json()).toEqual({ session_id: 's1', status: 'queued', position: 1 });
    const steered = await post('/api/sessions/s1/messages', { message: 'mention the kettle', steer: true });
    expect(await steered.json()).toEqual({ session_id: 's1', status: 'steered', position: 0 });
    // Taken up by the worker's run while the model still answers: it joins this turn, at its next step.
    await steerTaken('mention the kettle');
    llm.release();
    expect((await first).status).toBe(200);
    const end = watcher.messages.indexOf(await watcher.next((m) => m.type === 'done', from));
    await watcher.next((m) => m.type === 'done', end + 1);
    const events = watcher.messages.slice(from);
    expect(events.filter((m) => m.type === 'user_message').map((m) => m.text)).toEqual(['first', 'second']);
    const steer = watcher.messages.findIndex((m, i) => i >= from && m.type === 'steer');
    expect(watcher.messages[steer]).toMatchObject({ text: 'mention the kettle' });
    expect(steer).toBeLessThan(end);
    expect(llm.requests.some((r) => JSON.stringify(r.body.messages).includes('mention the kettle'))).toBe(
      true,
    );
  }, 60_000);

  it('keeps a session’s turns in order when a stopped worker’s turn waits for its retry', async () => {
    await post('/api/sessions', { id: 'order' });
    llm.push(
      reply().text('Half of').chunkSize(4).holdAfter(1),
      reply().text('The first, answered.'),
      reply().text('The second, answered.'),
    );
    const first = post('/api/chat/order', { message: 'the first' });
    await llm.waitForHolds(6);
    // A second gateway queues the session's next turn meanwhile.
    const other = new TurnQueue(sql, db.url);
    try {
      const second = await other.add(
        { session: 'order', kind: 'message', text: 'the second' },
        { workspace, tags: [], description: 'the second' },
      );
      // The worker running the first is stopped: the queue tries it again after a pause, and
      // would run the second before it.
      const holder = await sql.query('select pid from hearth_session_leases where session_id = $1', [
        'order',
      ]);
      const stopped = workers.find((w) => w.child.pid === holder.rows[0].pid)!;
      stopped.child.kill('SIGTERM');
      await stopped.result;
      const next = worker();
      await untilWorkersStart([next], 30_000);

      expect(await (await first).json()).toMatchObject({ text: 'The first, answered.' });
      const result = await other.result(second);
      expect(result.detail).toMatchObject({ result: { text: 'The second, answered.' } });
      const stored = await sql.query(
        `select body from hearth_messages where session_id = $1 and role in ('user', 'assistant') order by seq`,
        ['order'],
      );
      const said = stored.rows.map((r) => JSON.parse(r.body).content);
      expect(said.indexOf('The first, answered.')).toBeLessThan(said.indexOf('the second'));
    } finally {
      await other.close();
    }
  }, 90_000);
});
