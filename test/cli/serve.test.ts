/**
 * `hearth serve` through the built CLI: it refuses an open bind, starts with a token file only the
 * user can read (and never prints the token), shows the PIN with a QR code, serves the sessions the
 * terminal made, and stops cleanly on SIGTERM.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliRun, runCli, servedAt, startCli } from '../support/cli.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';
import { waitUntil } from '../support/wait.js';

let server: ScriptedServer;
let workspace: string;
let home: string;
const running: CliRun[] = [];

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-serve-')));
  home = await mkdtemp(join(tmpdir(), 'hearth-serve-home-'));
  server = await startScriptedServer({ models: ['m'], turns: [reply().text('Made in the terminal.')] });
});
afterEach(async () => {
  for (const run of running.splice(0)) run.child.kill('SIGKILL');
  await server.close();
  for (const dir of [workspace, home]) await rm(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  HOME: home,
  HEARTH_HOME: join(home, '.hearth'),
  HEARTH_BASE_URL: server.baseUrl,
  HEARTH_MODEL: 'm',
  HEARTH_SANDBOX: 'none',
  ...extra,
});

/** Starts `hearth serve` and resolves once its banner is out, with the URL it printed. */
async function serve(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ run: CliRun; url: string; out: () => string }> {
  const run = startCli(['serve', '--port', '0', ...args], { cwd: workspace, env: env(extra) });
  running.push(run);
  return { run, ...(await servedAt(run)) };
}

describe('hearth serve', () => {
  it('refuses to listen beyond loopback without a PIN or token, and says how', async () => {
    const result = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], {
      cwd: workspace,
      env: env(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Refusing to listen on 0.0.0.0');
    expect(result.stderr).toContain('--pin');
    expect(result.stderr).toContain('--token');
  });

  it('refuses to queue turns to workers without a shared database, and says what to set', async () => {
    await mkdir(join(home, '.hearth'), { recursive: true });
    await writeFile(join(home, '.hearth', 'config.json'), JSON.stringify({ gateway: { turns: 'workers' } }));
    const result = await runCli(['serve', '--port', '0'], { cwd: workspace, env: env() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gateway.turns: workers queues turns in the shared database');
    expect(result.stderr).toContain('storage: postgres://');
  });

  it('takes no token from the workspace .env and refuses a short one', async () => {
    await writeFile(join(workspace, '.env'), 'HEARTH_GATEWAY_TOKEN=from-the-workspace-123456\n');
    const result = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], {
      cwd: workspace,
      env: env(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Ignored HEARTH_GATEWAY_TOKEN from .env');
    const short = await runCli(['serve', '--token', 'short'], { cwd: workspace, env: env() });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('at least 16 characters');
  });

  it('serves the terminal’s sessions with a token kept in a private file, never printed, and stops on SIGTERM', async () => {
    const made = await runCli(['-p', '--json', 'hello'], { cwd: workspace, env: env() });
    expect(made.code).toBe(0);
    const events = made.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; id?: string });
    const sessionId = events.find((e) => e.type === 'session')!.id;
    // Queued before the gateway starts: its scheduler takes it at its first tick.
    expect((await runCli(['submit', 'tidy', 'the', 'notes'], { cwd: workspace, env: env() })).code).toBe(0);
    server.push(reply().text('Tidied.'));

    const { run, url, out } = await serve([]);
    const file = join(home, '.hearth', 'gateway.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const { token, url: written } = JSON.parse(await readFile(file, 'utf8')) as {
      token: string;
      url: string;
    };
    expect(written).toBe(url);
    expect(out()).toContain(`token: in ${file}`);
    expect(out()).not.toContain(token);

    const auth = { authorization: `Bearer ${token}` };
    expect((await fetch(`${url}/api/status`)).status).toBe(401);
    const answer = await fetch(`${url}/api/sessions/${sessionId}/history`, { headers: auth });
    const history = (await answer.json()) as { messages: Array<{ content: string }> };
    expect(answer.status, JSON.stringify(history)).toBe(200);
    expect(history.messages.map((m) => m.content)).toContain('Made in the terminal.');

    expect(out()).toContain('scheduler: on');
    let done: Array<{ run: { status: string; session_id: string } }> = [];
    await waitUntil(async () => {
      const inbox = await fetch(`${url}/api/inbox`, { headers: auth });
      done = ((await inbox.json()) as { done: typeof done }).done;
      return done.length === 1;
    }, 'the submitted task to be done by the gateway’s scheduler');
    expect(done[0]!.run.status).toBe('ok');
    const ran = await fetch(`${url}/api/sessions/${done[0]!.run.session_id}/history`, { headers: auth });
    expect(
      ((await ran.json()) as { messages: Array<{ content: string }> }).messages.map((m) => m.content),
    ).toEqual(expect.arrayContaining(['tidy the notes', 'Tidied.']));

    run.child.kill('SIGTERM');
    const result = await run.result;
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain(token);
    await expect(stat(file)).rejects.toThrow();
  });

  it('prints a PIN and a QR code for a phone when listening on the network', async () => {
    const { run, url, out } = await serve(['--host', '0.0.0.0', '--pin', '--no-scheduler']);
    expect(out()).toContain('scheduler: off');
    const pin = /PIN: (\d{6})/.exec(out())?.[1];
    expect(pin).toBeDefined();
    expect(out()).toMatch(/[▀▄█]{10}/);
    const login = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pin }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const cron = await fetch(`${url}/api/cron`, { headers: { cookie } });
    expect(((await cron.json()) as { scheduler: { running: boolean } }).scheduler.running).toBe(false);
    run.child.kill('SIGTERM');
    expect((await run.result).code).toBe(0);
  });
});
