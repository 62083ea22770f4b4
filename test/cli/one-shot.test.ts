import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply, type TurnInput } from '../support/scripted-server.js';

const cli = useCliHarness('cli');

function serve(turns: TurnInput[]) {
  return cli.serve({ turns, models: ['text-embedding-x', 'qwen-test'] });
}

describe('hearth one-shot CLI (built, as a subprocess)', () => {
  it('reads, writes, runs a command and answers', async () => {
    await writeFile(join(cli.workspace, 'README.md'), '# Demo\nHearth demo project.\nIt does things.\n');
    await serve([
      reply().text('Let me read it.').tool('read_file', { path: 'README.md' }),
      reply().tool('write_file', { path: 'SUMMARY.md', content: 'A demo project.\nIt does things.\n' }),
      reply().tool('shell', { command: 'wc -l < SUMMARY.md && echo checked >&2' }),
      reply().text('Wrote SUMMARY.md (2 lines).'),
    ]);
    const r = await cli.run(['--yolo', 'summarise README.md and write it to SUMMARY.md']);
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.code).toBe(0);
    expect(await readFile(join(cli.workspace, 'SUMMARY.md'), 'utf8')).toBe(
      'A demo project.\nIt does things.\n',
    );
    // Stdout is a pipe here: it holds what the model said, each turn a paragraph; tool lines went to stderr.
    expect(r.stdout).toBe('Let me read it.\n\nWrote SUMMARY.md (2 lines).\n');
    expect(r.stderr).toMatch(/✓ read_file README\.md/);
    expect(r.stderr).toMatch(/✓ shell wc -l/);

    expect(cli.server.requests).toHaveLength(4);
    // No model was given: the server's first chat model (not the embedding one) was used.
    expect(cli.server.requests.map((q) => q.body.model)).toEqual(Array(4).fill('qwen-test'));
    const last = cli.server.requests[3]!.body.messages as ChatMessage[];
    expect(last[0]!.role).toBe('system');
    expect(last[1]).toEqual({ role: 'user', content: 'summarise README.md and write it to SUMMARY.md' });
    const toolOutputs = last.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(toolOutputs[0]).toMatch(/1\t# Demo\n\s*2\tHearth demo project\./);
    expect(toolOutputs[1]).toMatch(/SUMMARY\.md/);
    expect(toolOutputs[2]).toMatch(/^2\n/m);
    expect(toolOutputs[2]).toContain('checked');
    expect(toolOutputs[2]).toMatch(/\[exit 0 · [\d.]+s\]/);
    // Each request extends the one before it: the prompt cache stays valid.
    for (let i = 1; i < 4; i++) {
      const prev = cli.server.requests[i - 1]!.body.messages as ChatMessage[];
      const next = cli.server.requests[i]!.body.messages as ChatMessage[];
      expect(next.slice(0, prev.length)).toEqual(prev);
    }
  });

  it('declines changes without --yolo and says how to allow them', async () => {
    await serve([
      reply().tool('write_file', { path: 'x.txt', content: 'x' }),
      reply().text('I could not write it.'),
    ]);
    const r = await cli.run(['write x.txt']);
    // The task could not be done as asked: a script sees it in the exit code.
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/✗ write_file x\.txt.*--allow 'write_file\(x\.txt\)', or --yolo/);
    expect(r.stderr).toMatch(/1 call\(s\) were declined because no terminal could ask/);
    const toolMessage = (cli.server.requests[1]!.body.messages as ChatMessage[]).at(-1)!;
    expect(toolMessage.content).toMatch(/--yolo/);
    await expect(readFile(join(cli.workspace, 'x.txt'))).rejects.toThrow();
  });

  it('prints events as JSON lines with --json', async () => {
    await serve([reply().reasoning('hmm').tool('list_dir', {}), reply().text('Empty folder.')]);
    const r = await cli.run(['--json', '-C', cli.workspace, 'what is here?'], { cwd: cli.home });
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AgentEvent);
    const types = events.filter((e) => e.type !== 'warning').map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['session', 'turn_start']);
    expect(events.find((e) => e.type === 'session')).toMatchObject({
      workspace: cli.workspace,
      model: 'qwen-test',
    });
    expect(types).toContain('reasoning_delta');
    expect(types).toContain('tool_call');
    expect(types).toContain('tool_result');
    expect(types).toContain('usage');
    expect(events.at(-1)).toMatchObject({ type: 'done', reason: 'completed', text: 'Empty folder.' });
  });

  it('appends piped stdin to the task', async () => {
    await serve([reply().text('Looks fine.')]);
    const r = await cli.run(['review this diff'], { stdin: '+added line\n' });
    expect(r.code).toBe(0);
    const user = (cli.server.requests[0]!.body.messages as ChatMessage[])[1]!;
    expect(user.content).toBe('review this diff\n\n+added line');
  });

  it('exits 2 at max iterations', async () => {
    await serve([reply().tool('list_dir', {}), reply().tool('list_dir', {})]);
    const r = await cli.run(['--max-iterations', '2', 'loop']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Stopped after 2 turns/);
  });

  it('exits 130 on Ctrl+C, aborting the request', async () => {
    // The server never answers and the CLI's timeouts are minutes long: only the abort ends the run.
    await serve([reply().hang()]);
    const run = cli.start(['think hard']);
    await cli.server.waitForRequests(1);
    run.child.kill('SIGINT');
    const r = await run.result;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/Interrupted/);
  });

  it('exits 1 with a clear message when the server fails', async () => {
    await serve([reply().httpError(404, { body: '{"error":{"message":"model qwen-test not found"}}' })]);
    const r = await cli.run(['hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/model qwen-test not found.*base URL/);
  });

  it('reports an invalid config file by name', async () => {
    await serve([]);
    await writeFile(join(cli.workspace, '.hearth-config.json'), '');
    await mkdir(join(cli.workspace, '.hearth'));
    await writeFile(join(cli.workspace, '.hearth', 'config.json'), '{"max_iterations": "lots", "colour": 1}');
    const r = await cli.run(['hi']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(join(cli.workspace, '.hearth', 'config.json'));
    expect(r.stderr).toMatch(/max_iterations/);
    expect(r.stderr).toMatch(/unknown key "colour"/);
  });

  it('prints its version and help', async () => {
    const version = await cli.run(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await cli.run(['--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--base-url', '--model', '--json', '--workspace', '--yolo', 'Exit codes']) {
      expect(help.stdout).toContain(flag);
    }
  });
});
