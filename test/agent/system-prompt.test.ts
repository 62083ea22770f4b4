import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readProjectContext } from '../../src/agent/project-context.js';
import { buildSystemPrompt, shortPath, WORKSPACE_PATH_CHARS } from '../../src/agent/system-prompt.js';

let ws: string;
beforeEach(async () => {
  ws = await mkdtemp(join(tmpdir(), 'hearth-prompt-'));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

describe('system prompt', () => {
  it('carries AGENTS.md and SOUL.md, and nothing that changes between runs', async () => {
    await writeFile(join(ws, 'AGENTS.md'), 'Run tests with `npm test`.\n');
    await mkdir(join(ws, '.hearth'));
    await writeFile(join(ws, '.hearth', 'SOUL.md'), 'Be terse.');
    const first = buildSystemPrompt({ workspace: ws, context: await readProjectContext(ws) });
    expect(first).toContain('## Project notes (AGENTS.md)\nRun tests with `npm test`.');
    expect(first).toContain('## Personality\nBe terse.');
    expect(first).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}/);
    await new Promise((r) => setTimeout(r, 5));
    expect(buildSystemPrompt({ workspace: ws, context: await readProjectContext(ws) })).toBe(first);
  });

  it('prefers .hearth/HEARTH.md over AGENTS.md and cuts long files with a note', async () => {
    await writeFile(join(ws, 'AGENTS.md'), 'generic notes');
    await mkdir(join(ws, '.hearth'));
    await writeFile(join(ws, '.hearth', 'HEARTH.md'), `${'x'.repeat(7000)}`);
    const context = await readProjectContext(ws);
    expect(context.notes?.file).toBe('.hearth/HEARTH.md');
    expect(context.notes?.text).toMatch(
      /\[\.\.\. \.hearth\/HEARTH\.md is longer; read it with read_file for the rest\]$/,
    );
    expect(context.notes!.text.length).toBeLessThan(6200);
  });

  it('reads CLAUDE.md when there is no AGENTS.md, and AGENTS.md when there are both', async () => {
    await writeFile(join(ws, 'CLAUDE.md'), 'Use pnpm, not npm.');
    expect((await readProjectContext(ws)).notes).toEqual({ file: 'CLAUDE.md', text: 'Use pnpm, not npm.' });
    await writeFile(join(ws, 'AGENTS.md'), 'Run make check.');
    expect((await readProjectContext(ws)).notes?.file).toBe('AGENTS.md');
  });

  it('is short without project files', async () => {
    const prompt = buildSystemPrompt({ workspace: ws, context: await readProjectContext(ws) });
    expect(prompt).not.toContain('##');
    expect(prompt.length).toBeLessThan(600);
  });

  it("shows a deep workspace's path by its last folders, so no path costs more tokens than a short one", () => {
    const short = '/home/ann/web';
    expect(shortPath(short)).toBe(short);
    const deep = `/srv/${'a'.repeat(120)}/${'b'.repeat(20)}/shop/api`;
    expect(shortPath(deep)).toBe(`…/${'b'.repeat(20)}/shop/api`);
    // One folder longer than the cap is cut inside its name.
    const long = `/tmp/${'c'.repeat(200)}`;
    expect(shortPath(long)).toHaveLength(WORKSPACE_PATH_CHARS);
    expect(shortPath(long).startsWith('…/')).toBe(true);
    const prompts = [short, deep, long].map((workspace) => buildSystemPrompt({ workspace }).length);
    expect(Math.max(...prompts)).toBeLessThanOrEqual(
      buildSystemPrompt({ workspace: '' }).length + WORKSPACE_PATH_CHARS,
    );
  });
});
