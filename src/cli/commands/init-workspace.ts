import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileLayer } from '../../config/layers.js';
import { hearthHome } from '../../config/load.js';
import { withholdSecurity } from '../../config/security.js';
import { locateConfigFile } from '../../config/sources.js';
import { trustProject } from '../../config/trust.js';
import { discoverServer, listModels, pickChatModel, pickLoadedModel } from '../../llm/discover.js';
import { loadConfigFromFlags } from '../options.js';
import { visible } from '../sanitize.js';
import type { InitFlags } from './init.js';

/** Asks one question with a default; an empty answer takes the default. */
type Ask = (question: string, fallback: string) => Promise<string>;

class Cancelled extends Error {}

/** Writes what is missing of .hearth/config.json and AGENTS.md; resolves to the exit code. */
export async function init(flags: InitFlags): Promise<number> {
  const workspace = resolve(flags.workspace);
  await mkdir(workspace, { recursive: true });
  const configLocation = locateConfigFile(join(workspace, '.hearth'));
  const notesFile = ['AGENTS.md', '.hearth/HEARTH.md'].find((f) => existsSync(join(workspace, f)));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  if (configLocation.exists && notesFile) {
    say(`Nothing to do: ${configLocation.path} and ${join(workspace, notesFile)} exist already.`);
    say('Hearth never overwrites them; edit them by hand.');
    return 0;
  }

  // Without a terminal nobody can answer, so piped and scripted runs behave like --yes.
  const interactive = !flags.yes && process.stdin.isTTY === true && process.stderr.isTTY === true;
  const prompt = interactive ? terminalAsk() : undefined;
  const ask: Ask = prompt ? prompt.ask : async (_q, fallback) => fallback;
  const project = await detectProject(workspace);
  let settings: Record<string, unknown> | undefined;
  let testCommand = project.test ?? '';
  try {
    if (!configLocation.exists) settings = await chooseSettings(flags, ask, interactive);
    if (!notesFile && interactive)
      testCommand = await ask('Command that runs the tests (goes into AGENTS.md)', testCommand);
  } catch (err) {
    if (!(err instanceof Cancelled)) throw err;
    say('Cancelled; nothing was written.');
    return 130;
  } finally {
    prompt?.close();
  }

  if (configLocation.exists)
    say(`${configLocation.path} exists; left as it is (Hearth never overwrites it).`);
  else if (settings) {
    const path = join(workspace, '.hearth', 'config.json');
    await mkdir(join(workspace, '.hearth'), { recursive: true });
    // wx: never replace a file that appeared since the check above.
    const text = `${JSON.stringify(settings, null, 2)}\n`;
    await writeFile(path, text, { flag: 'wx' });
    say(`Created ${path}`);
    const approved = await approveWritten(path, text);
    if (settings.base_url === undefined && settings.model === undefined) {
      say('  No model server answered, so it names none: each run looks for LM Studio (:1234), Ollama');
      say('  (:11434), llama.cpp (:8080) and vLLM (:8000). To pin one, add "base_url" (ending in /v1)');
      say('  and "model" to that file.');
    } else {
      say(
        `  server ${settings.base_url ?? '(found at each run)'}, model ${settings.model ?? '(the loaded one)'}`,
      );
    }
    if (approved.length > 0)
      say(`  Approved as written, so later runs use its ${approved.join(', ')} without a warning.`);
    say('  Add permission rules there, e.g. "allow": ["shell(npm test*)"], then approve the changed file');
    say('  with hearth config trust (a project file sets security settings only once approved).');
  }

  if (notesFile) say(`${join(workspace, notesFile)} exists; left as it is (Hearth never overwrites it).`);
  else {
    const path = join(workspace, 'AGENTS.md');
    await writeFile(path, agentsTemplate({ ...project, test: testCommand || undefined }), { flag: 'wx' });
    say(`Created ${path}`);
    say('  Fill in the overview, conventions and what not to touch: it goes into every session.');
  }
  return 0;
}

/**
 * A project file sets security settings (base_url, a model file) only once the user approved that
 * very content (config/security.ts). This one holds what the user chose just now, so it is approved
 * as written; any later change to it needs `hearth config trust`. Resolves to the keys that needed it.
 */
async function approveWritten(path: string, text: string): Promise<string[]> {
  const held = withholdSecurity(fileLayer(path, JSON.parse(text)), '').map((i) => i.key);
  if (held.length > 0) await trustProject(hearthHome(), path);
  return held;
}

/** The server and model for the new config: flags, env and the user's file first, then discovery. */
async function chooseSettings(
  flags: InitFlags,
  ask: Ask,
  interactive: boolean,
): Promise<Record<string, unknown>> {
  const { config, profile } = await loadConfigFromFlags(flags);
  const rules = { permissions: { allow: [], deny: [] } };
  // A profile from the user's file already carries its server: name it rather than copy it.
  if (profile) return { model: profile.name, ...rules };
  let baseUrl = config.base_url;
  let models: string[] = [];
  let model = config.model;
  if (baseUrl) {
    models = await listModels(baseUrl, { apiKey: config.api_key }).catch(() => []);
    model ??= pickChatModel(models);
  } else {
    const found = await discoverServer().catch(() => undefined);
    if (found) {
      baseUrl = found.baseUrl;
      models = found.models;
      model ??= await pickLoadedModel(found);
    }
  }
  if (interactive) {
    const answer = await askUrl(ask, baseUrl);
    if (answer !== baseUrl) {
      baseUrl = answer;
      models = answer ? await listModels(answer, { apiKey: config.api_key }).catch(() => []) : [];
      model = config.model ?? pickChatModel(models);
      if (answer && models.length === 0)
        process.stderr.write(`  (${answer} does not answer now; saving it anyway)\n`);
    }
    if (models.length > 0)
      process.stderr.write(`  Models there: ${visible(models.slice(0, 12).join(', '))}\n`);
    const chosen = await ask(model ? 'Model' : 'Model (empty: whichever the server has loaded)', model ?? '');
    model = chosen || undefined;
  }
  return { base_url: baseUrl, model, ...rules };
}

async function askUrl(ask: Ask, fallback: string | undefined): Promise<string | undefined> {
  for (;;) {
    const answer = await ask('Model server URL ("auto": find one at each run)', fallback ?? 'auto');
    if (answer === 'auto') return undefined;
    try {
      const url = new URL(answer);
      if (url.protocol === 'http:' || url.protocol === 'https:') return answer.replace(/\/+$/, '');
    } catch {
      // Asked again below.
    }
    process.stderr.write('  Expected a URL such as http://127.0.0.1:1234/v1, or "auto".\n');
  }
}

function terminalAsk(): { ask: Ask; close(): void } {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const closed = new AbortController();
  rl.on('close', () => closed.abort());
  return {
    async ask(question, fallback) {
      try {
        const shown = fallback ? ` [${fallback}]` : '';
        const answer = await rl.question(`${question}${shown}: `, { signal: closed.signal });
        return answer.trim() || fallback;
      } catch {
        throw new Cancelled();
      }
    },
    close: () => rl.close(),
  };
}

interface Project {
  name: string;
  build?: string;
  test?: string;
}

/** The project's name and its build and test commands, from the files that usually say. */
async function detectProject(workspace: string): Promise<Project> {
  const project: Project = { name: basename(workspace) };
  const pkg = await readJson(join(workspace, 'package.json'));
  if (pkg) {
    const scripts = (pkg.scripts ?? {}) as Record<string, unknown>;
    if (typeof pkg.name === 'string') project.name = pkg.name;
    if (scripts.build) project.build = 'npm run build';
    if (scripts.test) project.test = 'npm test';
  } else if (existsSync(join(workspace, 'Cargo.toml'))) {
    Object.assign(project, { build: 'cargo build', test: 'cargo test' });
  } else if (existsSync(join(workspace, 'go.mod'))) {
    Object.assign(project, { build: 'go build ./...', test: 'go test ./...' });
  } else if (existsSync(join(workspace, 'pyproject.toml'))) {
    project.test = 'pytest';
  } else if (existsSync(join(workspace, 'Makefile'))) {
    const makefile = await readFile(join(workspace, 'Makefile'), 'utf8').catch(() => '');
    project.build = 'make';
    if (/^test:/m.test(makefile)) project.test = 'make test';
  }
  return project;
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Short on purpose: the whole file is sent with every request. */
function agentsTemplate(project: Project): string {
  const command = (what: string, cmd: string | undefined) =>
    `- ${what}: ${cmd ? `\`${cmd}\`` : 'TODO: the command'}`;
  return `# ${project.name}

Notes for coding agents. Hearth reads this file at the start of every session and sends it with
every request, so keep it short.

## Overview

TODO: what this project does, and where the main code and the tests live.

## Build and test

${command('Build', project.build)}
${command('Test', project.test)}

Run the tests after every change, and fix what you broke before finishing.

## Conventions

TODO: language and style rules, naming, how tests are written, how commits look.

## Do not touch

- \`.env\` and other files holding secrets
- TODO: generated or vendored code, lock files, anything else to leave alone
`;
}
