/**
 * `hearth eval --profiles` through the installed bin: each named profile from "models" in the
 * config is evaluated against its own server and model, its results are reported under the
 * profile's name, and an unknown profile is refused before any server is asked. The report names
 * what each server says of its model (kind, quantisation, window), and repeats give the spread.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import {
  lmStudioModelRoute,
  lmStudioRoutes,
  lmStudioV0Models,
  ollamaRoutes,
  ollamaShowQwenCoder,
} from '../support/probe-fixtures.js';
import { reply, type ScriptedServer, startScriptedServer } from '../support/scripted-server.js';

interface Done {
  run: { id: string; models: Array<{ label: string; model: string; server: string }> };
  summary: Array<{ label: string; attempts: number; passed: number; passRate: number; spread: object }>;
}

function doneLine(stdout: string): Done {
  const done = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string } & Done)
    .find((l) => l.type === 'eval_done');
  if (!done) throw new Error(`no eval_done line in:\n${stdout}`);
  return done;
}

/** A suite of one task: write hello to hello.txt. */
async function helloSuite(dir: string): Promise<string> {
  await mkdir(join(dir, 'hello'), { recursive: true });
  await writeFile(join(dir, 'hello', 'task.md'), 'Write hello to hello.txt.');
  await writeFile(join(dir, 'hello', 'check'), '#!/bin/sh\ngrep -qx hello hello.txt\n');
  await chmod(join(dir, 'hello', 'check'), 0o755);
  return dir;
}

const writeHello = () => reply().tool('write_file', { path: 'hello.txt', content: 'hello\n' });

describe('hearth eval --profiles through the installed bin', () => {
  const cli = useCliHarness('acc-eval-profiles');
  let second: ScriptedServer | undefined;
  afterEach(async () => {
    await second?.close();
    second = undefined;
  });
  /** The user's config: these profiles under "models", each a server and a model. */
  const profiles = async (named: Record<string, { base_url: string; model: string }>) => {
    await mkdir(cli.hearthHome, { recursive: true });
    await writeFile(join(cli.hearthHome, 'config.json'), JSON.stringify({ models: named }));
  };

  it("runs each profile against its own server and model, reports it under the profile's name, and refuses an unknown one", async () => {
    const suite = await helloSuite(await cli.tempDir('suite'));
    // Two servers, each with its own model: "fast" does the task, "careful" only talks.
    const first = await cli.serve({
      turns: [writeHello(), reply().text('Done.')],
      models: ['small-q4'],
    });
    second = await startScriptedServer({ turns: [reply().text('I would write it.')], models: ['big-q8'] });
    await profiles({
      fast: { base_url: first.baseUrl, model: 'small-q4' },
      careful: { base_url: second.baseUrl, model: 'big-q8' },
    });
    // No HEARTH_BASE_URL: each profile's own base_url must decide where it runs.
    const env = { HEARTH_BASE_URL: undefined };

    const r = await cli.run(['eval', '--suite', suite, '--profiles', 'fast,careful', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const done = doneLine(r.stdout);
    expect(done.summary.map((s) => s.label)).toEqual(['fast', 'careful']);
    const by = Object.fromEntries(done.summary.map((s) => [s.label, s]));
    expect(by.fast).toMatchObject({ attempts: 1, passed: 1, passRate: 1 });
    expect(by.careful).toMatchObject({ attempts: 1, passed: 0, passRate: 0 });
    expect(done.run.models).toEqual([
      expect.objectContaining({ label: 'fast', model: 'small-q4', server: first.baseUrl }),
      expect.objectContaining({ label: 'careful', model: 'big-q8', server: second.baseUrl }),
    ]);
    expect(first.requests.map((q) => q.body.model)).toEqual(['small-q4', 'small-q4']);
    expect(second.requests.map((q) => q.body.model)).toEqual(['big-q8']);

    // The table a person reads names the profiles too, with the model and server behind each.
    const shown = await cli.run(['eval', 'show', done.run.id], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`fast: small-q4 on `);
    expect(shown.stdout).toContain(`at ${first.baseUrl}`);
    expect(shown.stdout).toMatch(/^fast\s+100%/m);
    expect(shown.stdout).toMatch(/^careful\s+0%/m);

    // An unknown profile: a clear error naming the ones there are; no model asked, no run kept.
    const asked = first.requests.length + second.requests.length;
    const bad = await cli.run(['eval', '--suite', suite, '--profiles', 'fast,nosuch'], { env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('No profile named "nosuch"');
    expect(bad.stderr).toContain('profiles: fast, careful');
    expect(first.requests.length + second.requests.length).toBe(asked);
    const listed = JSON.parse((await cli.run(['eval', 'list', '--json'], { env })).stdout) as unknown[];
    expect(listed).toHaveLength(1);

    // --models and --profiles together are refused.
    const both = await cli.run(['eval', '--suite', suite, '--profiles', 'fast', '--models', 'x'], { env });
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('Give --models or --profiles, not both.');
  }, 120_000);

  it('names what each server says of its model (kind, quantisation, the window it really has), and with --repeat the spread', async () => {
    const suite = await helloSuite(await cli.tempDir('suite'));
    const lmEntry = lmStudioV0Models.data[0]!;
    // Ollama: passes its first attempt, not its second. LM Studio: passes both.
    const ollama = await cli.serve({
      turns: [writeHello(), reply().text('Done.'), reply().text('Done.')],
      models: ['qwen2.5-coder:7b'],
      extraRoutes: ollamaRoutes({ 'qwen2.5-coder:7b': ollamaShowQwenCoder }),
    });
    second = await startScriptedServer({
      turns: [writeHello(), reply().text('Done.'), writeHello(), reply().text('Done.')],
      models: [lmEntry.id],
      extraRoutes: { ...lmStudioRoutes(), ...lmStudioModelRoute(lmEntry) },
    });
    await profiles({
      olla: { base_url: ollama.baseUrl, model: 'qwen2.5-coder:7b' },
      studio: { base_url: second.baseUrl, model: lmEntry.id },
    });
    const env = { HEARTH_BASE_URL: undefined };
    const r = await cli.run(
      ['eval', '--suite', suite, '--profiles', 'olla,studio', '--repeat', '2', '--json'],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const done = doneLine(r.stdout);
    expect(done.run.models).toEqual([
      expect.objectContaining({
        label: 'olla',
        serverKind: 'ollama',
        quantisation: 'Q4_K_M',
        contextWindow: 16384,
      }),
      expect.objectContaining({
        label: 'studio',
        serverKind: 'lmstudio',
        quantisation: 'Q4_K_M',
        contextWindow: 8192,
      }),
    ]);
    const by = Object.fromEntries(done.summary.map((s) => [s.label, s]));
    expect(by.olla).toMatchObject({ attempts: 2, passed: 1, passRate: 0.5, spread: { min: 0, max: 1 } });
    expect(by.studio).toMatchObject({ attempts: 2, passed: 2, passRate: 1, spread: { min: 1, max: 1 } });

    const shown = await cli.run(['eval', 'show', done.run.id], { env });
    expect(shown.stdout).toContain('olla: qwen2.5-coder:7b on ollama at ');
    expect(shown.stdout).toMatch(/olla: .*, Q4_K_M, window 16384/);
    expect(shown.stdout).toMatch(/^olla\s+50%\s+0%-100%\s+1\/2/m);
    expect(shown.stdout).toMatch(/^studio\s+100%\s+-\s+2\/2/m);
  }, 120_000);
});
