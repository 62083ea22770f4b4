import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/**
 * What the model server refuses, as a user of the installed hearth meets it: a prompt over the
 * server's real window (a scripted llama.cpp that answers as the real one does), and a history
 * whose turns do not alternate after a kill (a scripted vLLM with Mistral's chat template).
 */
describe('context windows and turns through the installed hearth', () => {
  const cli = useCliHarness('acc-context');
  const sent = (request: number) => cli.server.requests[request]!.body.messages as ChatMessage[];

  it("learns the server's window from its context-exceeded error, compacts, retries and answers", async () => {
    // About 40,000 characters: more than the server's window holds, less than the one configured.
    await writeFile(
      join(cli.workspace, 'notes.txt'),
      'The quick brown fox jumps over the lazy dog.\n'.repeat(900),
    );
    await cli.serve({
      turns: [
        reply().tool('read_file', { path: 'notes.txt' }),
        reply().text('The notes repeat one pangram.'),
      ],
      contextLimit: { tokens: 8192, server: 'llamacpp' },
    });
    const r = await cli.run(['--yolo', 'what is in notes.txt?'], { env: { HEARTH_CONTEXT_WINDOW: '32768' } });
    expect(r.stderr).toContain(
      "The model server's context window is 8192 tokens (its error says so), not the 32768 Hearth assumed; assuming 8192 from now on.",
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('The notes repeat one pangram.');
    // Refused once (the second request), then answered with the history compacted to fit.
    expect(cli.server.requests).toHaveLength(3);
    expect(cli.server.played).toBe(2);
    expect(sent(2).at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringContaining('quick brown fox'),
    });
  });

  it('keeps a runaway reply to what one reply may add, says so, and the session goes on', async () => {
    const rambling = 'All work and no play makes Jack a dull boy. '.repeat(5000);
    await cli.serve({
      turns: [reply().text(rambling).chunkSize(65536), reply().text('Back to work.')],
      contextLimit: { tokens: 8192, server: 'llamacpp' },
    });
    const env = { HEARTH_CONTEXT_WINDOW: '8192' };
    const first = await cli.run(['say something'], { env });
    expect(first.code).toBe(0);
    // Shown whole as it streamed; kept by its start and end.
    expect(first.stdout).toContain(rambling.trim());
    expect(first.stderr).toMatch(
      /The model's reply was 220000 characters, more than one reply may add to the conversation in this context window \(8601\); \d+ were kept\./,
    );
    const next = await cli.run(['-c', 'now something useful'], { env });
    expect(next.code).toBe(0);
    expect(next.stdout).toContain('Back to work.');
    const kept = sent(1).find((m) => m.role === 'assistant')!;
    expect(kept.content).toContain('this reply was cut to fit the context window');
    expect(kept.content!.length).toBeLessThan(8601 + 200);
  });

  it('goes on with -c after kills mid-reply, with a server that wants user and assistant to alternate', async () => {
    await cli.serve({
      turns: [
        reply().tool('write_file', { path: 'notes.txt', content: 'first line\n' }),
        reply().text('I wrote the first line and now').chunkSize(4).holdAfter(1),
        reply().text('Carrying').chunkSize(4).holdAfter(1),
        reply().text('Added the second line.'),
      ],
      strictAlternation: true,
    });
    const killMidReply = async (args: string[], holds: number) => {
      const run = cli.start(args);
      await cli.server.waitForHolds(holds);
      run.child.kill('SIGKILL');
      expect((await run.result).code).toBeNull();
    };
    // Killed while answering the write's result: the history ends with that result.
    await killMidReply(['--yolo', 'write notes.txt'], 1);
    // Killed again while answering the next message: it ends with that message.
    await killMidReply(['--yolo', '-c', 'add a second line'], 2);
    const r = await cli.run(['--yolo', '-c', 'and say what you did']);
    expect(r.stderr).not.toMatch(/alternate/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Added the second line.');
    expect(await readFile(join(cli.workspace, 'notes.txt'), 'utf8')).toBe('first line\n');
    // The two messages the kills left in a row went as one, after a stand-in for the reply that never came.
    expect(sent(3).slice(-3)).toEqual([
      { role: 'tool', tool_call_id: expect.any(String), content: expect.any(String) },
      { role: 'assistant', content: expect.stringMatching(/^\[no reply/) },
      { role: 'user', content: 'add a second line\n\nand say what you did' },
    ]);
  });
});
