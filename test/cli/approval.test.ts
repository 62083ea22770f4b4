import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('approve');

describe('approvals at a real terminal', () => {
  it('asks before changes: y runs once, a covers similar calls, n declines with a reason', async () => {
    const server = await cli.serve([
      reply().tool('write_file', { path: 'one.txt', content: '1\n' }),
      reply().tool('shell', { command: 'ls -1' }),
      reply().tool('shell', { command: 'ls -la' }),
      reply().tool('write_file', { path: 'three.txt', content: '3\n' }),
      reply().text('Done.'),
    ]);
    const term = cli.terminal(['make files']);
    await term.waitFor(/write_file one\.txt[\s\S]*Allow\?/);
    // One key answers; no Enter is needed.
    expect(term.screen).toMatch(/y once · a always \(similar calls\) · n no {2}\(one key\)/);
    term.send('y');
    await term.waitFor(/\? ls -1[\s\S]*Allow\?/);
    term.send('a');
    // `ls -la` is covered by the "always" answer for `ls`: the next question is about three.txt.
    await term.waitFor(/write_file three\.txt[\s\S]*Allow\?/);
    expect(term.screen).not.toMatch(/\? ls -la/);
    term.send('n');
    await term.waitFor(/Reason for the model/);
    term.send('not that file\r');
    expect(await term.exited).toBe(0);
    expect(await readFile(join(cli.workspace, 'one.txt'), 'utf8')).toBe('1\n');
    await expect(readFile(join(cli.workspace, 'three.txt'))).rejects.toThrow();
    const last = server.requests.at(-1)!.body.messages as ChatMessage[];
    expect(last.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('not that file') });
  });
});
