import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

/**
 * The everyday commands through the installed bin: sessions, debug, doctor, config, memory, skills
 * with a hook, and models. Each asserts what a user reads in its output.
 */
const cli = useCliHarness('acc-commands');

async function userConfig(settings: object): Promise<void> {
  await mkdir(cli.hearthHome, { recursive: true });
  await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify(settings));
}
const ok = async (args: string[], opts: Parameters<typeof cli.run>[1] = {}) => {
  const r = await cli.run(args, opts);
  expect(r.code, `hearth ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
};

describe('the installed hearth', () => {
  it('answers --version and --help', async () => {
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '../../package.json'), 'utf8'));
    expect((await ok(['--version'])).stdout.trim()).toBe(version);
    const help = (await ok(['--help'])).stdout;
    expect(help).toMatch(/^Usage: hearth \[options\] \[command\] \[task\.\.\.\]/);
    expect(help).toContain('Commands:');
  });

  it('keeps sessions: list, show, export, fork and rm', async () => {
    await cli.serve({ models: ['m'], turns: [reply().text('The answer is 4.')] });
    const run = await ok(['--json', 'what is 2+2?']);
    const id = run.stdout.match(/"type":"session","id":"([^"]+)"/)?.[1];
    expect(id, run.stdout).toBeDefined();

    expect((await ok(['sessions'])).stdout).toContain(id!);
    const shown = (await ok(['sessions', 'show', id!])).stdout;
    expect(shown).toContain('what is 2+2?');
    expect(shown).toContain('The answer is 4.');
    const exported = (await ok(['sessions', 'export', id!])).stdout;
    const lines = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role?: string });
    expect(lines.some((l) => l.role === 'assistant')).toBe(true);
    const forked = (await ok(['sessions', 'fork', id!])).stdout;
    const copy = forked.match(/^Forked into session (\S+)\. Continue it with: hearth --resume \1 /)?.[1];
    expect(copy, forked).toBeDefined();
    expect((await ok(['sessions', 'show', copy!])).stdout).toContain('The answer is 4.');
    await ok(['sessions', 'rm', id!]);
    const left = (await ok(['sessions'])).stdout;
    expect(left).not.toContain(id!);
    expect(left).toContain(copy!);
  });

  it('debug prompt sizes what is sent; doctor checks the server; config shows where settings come from', async () => {
    await cli.serve({ models: ['scripted-model'] });
    const debug = JSON.parse((await ok(['debug', 'prompt', '--json'])).stdout) as {
      tools: { name: string }[];
    };
    expect(debug.tools.map((t) => t.name)).toContain('read_file');

    const doctor = await cli.run(['doctor', '--json']);
    const checks = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] })
      .checks;
    expect(checks.find((c) => c.name === 'server')).toMatchObject({ ok: true });

    await userConfig({ max_iterations: 7 });
    const shown = (await ok(['config', 'show'])).stdout;
    expect(shown).toContain(`max_iterations = 7`);
    expect(shown).toMatch(/^max_iterations = 7 +\(.*\/\.hearth\/config\.json\)$/m);
    expect((await ok(['config', 'path'])).stdout).toContain(join(cli.hearthHome, 'config.json'));
  });

  it('memory: add, list, search, forget', async () => {
    const added = (await ok(['memory', 'add', 'The build uses pnpm, not npm.'])).stdout;
    const id = added.match(/^Remembered as #(\d+) /)?.[1];
    expect(id, added).toBeDefined();
    expect((await ok(['memory', 'list'])).stdout).toMatch(
      new RegExp(`^#${id} +fact +project The build uses pnpm, not npm\\.$`, 'm'),
    );
    expect((await ok(['memory', 'search', 'pnpm'])).stdout).toContain(`#${id} `);
    await ok(['memory', 'forget', id!]);
    expect((await ok(['memory', 'list'])).stdout).not.toContain('pnpm, not npm');
  });

  it('runs a skill with --skill, lists it, and runs a PreToolUse hook from the user config', async () => {
    const dir = join(cli.workspace, '.hearth', 'skills', 'greet');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'SKILL.md'),
      '---\nname: greet\ndescription: Greet someone by name.\n---\n\nSay hello to $ARGUMENTS in French.\n',
    );
    const marker = join(await cli.tempDir('hook'), 'seen.json');
    await userConfig({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `cat > ${marker}` }] }],
      },
    });
    expect((await ok(['skills', 'list'])).stdout).toContain('greet');
    expect((await ok(['skills', 'show', 'greet'])).stdout).toContain('Greet someone by name.');
    await cli.serve({
      models: ['m'],
      turns: [reply().tool('shell', { command: 'echo bonjour' }), reply().text('Bonjour, Ada !')],
    });
    const r = await ok(['--yolo', '--skill', 'greet', 'Ada']);
    expect(r.stdout).toContain('Bonjour, Ada !');
    const task = (cli.server.requests[0]!.body.messages as ChatMessage[]).find((m) => m.role === 'user');
    expect(task?.content).toContain('Say hello to Ada in French.');
    expect(existsSync(marker)).toBe(true);
    expect(JSON.parse(await readFile(marker, 'utf8'))).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'echo bonjour' },
    });
  });

  it('models: lists recommended and downloaded models without fetching anything', async () => {
    expect((await ok(['models', 'pull', '--list'])).stdout).toMatch(/qwen/i);
    expect((await ok(['models', 'list'])).stdout).toMatch(/no models|none/i);
  });
});
