import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { hostProcessesWith } from '../support/processes.js';
import { reply } from '../support/scripted-server.js';
import { waitUntil, withDeadline } from '../support/wait.js';

/**
 * Issue 38: the limits on a runaway command, through the installed bin on a machine where Hearth
 * runs as root: a fork bomb and a disk filler from the model are stopped and the model is told why;
 * what a tool left running is gone once the run ends; `hearth doctor` names each limit and how it
 * is enforced. Both attacks are bounded (2000 processes, 400 MB) so a failing limit cannot hang or
 * fill the machine.
 */
describe('runaway limits through the installed hearth', () => {
  const cli = useCliHarness('acc-limits');

  const toolResults = (request: number) =>
    (cli.server.requests[request]!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);

  const limitsConfig = async () => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(
      join(cli.hearthHome, 'config.json'),
      JSON.stringify({ sandbox: { mode: 'bwrap', max_processes: 64, max_write_mb: 20 } }),
    );
  };

  it('stops a fork bomb and a disk filler, with the limits in the tool results', async () => {
    await limitsConfig();
    await cli.serve([
      reply().tool('shell', {
        command: "sh -c 'i=0; while [ $i -lt 2000 ]; do sleep 60 & i=$((i+1)); done; echo all started'",
      }),
      reply().tool('shell', {
        command:
          'i=0; while [ $i -lt 400 ]; do head -c 1048576 /dev/zero >> fill || break; i=$((i+1)); done; echo all written',
      }),
      reply().text('Both were stopped.'),
    ]);
    const r = await cli.run(['--yolo', 'try the fork bomb and the disk filler']);
    expect(r.code, r.stderr).toBe(0);
    const [bomb, filler] = toolResults(2);
    expect(bomb).not.toContain('all started');
    expect(bomb).toMatch(/hit the limit of 64 processes at once \(sandbox\.max_processes\)/);
    expect(filler).not.toContain('all written');
    expect(filler).toMatch(
      /Stopped: this command grew the disk holding the workspace by \d+ MB, past the limit of 20 MB per command \(sandbox\.max_write_mb\)/,
    );
    expect(filler).toMatch(/ask the user to raise sandbox\.max_write_mb/);
  });

  it('leaves nothing of an interpreter running once a one-shot run ends', async () => {
    await limitsConfig();
    const marker = `hearth-acc-${randomBytes(4).toString('hex')}`;
    await cli.serve([
      reply().tool('python', {
        code: `import subprocess\nsubprocess.Popen(['sh', '-c', 'exec -a ${marker} sleep 1000'], start_new_session=True)\nprint('started')`,
      }),
      reply().tool('shell', { command: `(exec -a ${marker} sleep 1000) & echo background` }),
      reply().text('Left them running.'),
    ]);
    const run = cli.start(['--yolo', '--tools', 'default,python', 'start background work']);
    const r = await withDeadline(run.result, 'the one-shot run to exit', 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(toolResults(2).join('\n')).toContain('started');
    await waitUntil(() => hostProcessesWith(marker, true).length === 0, 'the sleepers to be gone', 10_000);
  });

  it('doctor names each limit and how it is enforced', async () => {
    await limitsConfig();
    const r = await cli.run(['doctor']);
    expect(r.stdout).toMatch(
      /processes\s+64 at once per command \(sandbox\.max_processes; cgroup v\d pids\)/,
    );
    expect(r.stdout).toMatch(
      /disk writes\s+20 MB per command \(sandbox\.max_write_mb\): the growth of the workspace's disk/,
    );
    expect(r.stdout).toMatch(/process tree\s+killed when the command ends/);
    expect(r.stdout).toMatch(/file size\s+4096 MB per file/);
  });
});
