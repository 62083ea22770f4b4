/**
 * The acceptance project's global set-up: Hearth as a user installs it. The checkout is packed with
 * `npm pack` (after a build when dist/ is older than the sources) and the tarball installed with
 * `npm install -g --prefix`, as `npm i -g hearth-agent` would; every acceptance test runs that
 * prefix's `bin/hearth` by its `#!` line (test/support/cli.ts, `hearthCommand`).
 *
 * The install is kept between runs under the system temp dir, keyed by the tarball's SHA-256, so
 * a second run of an unchanged build skips it.
 *
 * Two shortcuts, each taking what the install would produce anyway:
 * - Dependencies come from npm's cache (`--prefer-offline`: `npm ci` filled it).
 * - better-sqlite3's install script fetches a prebuilt addon where it can reach GitHub (users' case)
 *   and compiles one for about 2½ minutes where it cannot (this machine's). The install runs with
 *   scripts off and takes the addon `npm ci` built for this same Node and package version.
 * node-llama-cpp (optional, never a dependency) is installed beside it in the prefix when the checkout
 * has it (.ci/run adds it), as the README tells users of a global install to do.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { isCurrent, root } from '../../../scripts/build-state.mjs';
import { commandsInHelp, uncovered } from './coverage.js';

const run = promisify(execFile);
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

async function packageVersion(dir: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Packs the checkout (building it first when stale) and returns the tarball's path. */
async function pack(into: string): Promise<string> {
  if (!isCurrent()) {
    process.stderr.write('acceptance: dist/ is older than the sources: npm run build\n');
    await npm(['run', 'build'], root);
  }
  await mkdir(into, { recursive: true });
  // The build is current (checked above): packing runs no script, so it does not build again.
  const { stdout } = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', into], root);
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  return join(into, filename);
}

async function install(tarball: string, prefix: string, llama: string | undefined): Promise<void> {
  await rm(prefix, { recursive: true, force: true });
  await npm(['install', '-g', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', tarball], root);
  const installed = join(prefix, 'lib', 'node_modules', 'hearth-agent', 'node_modules', 'better-sqlite3');
  const built = join(root, 'node_modules', 'better-sqlite3');
  if ((await packageVersion(installed)) !== (await packageVersion(built)))
    throw new Error('the installed better-sqlite3 is not the version of the checkout: run npm ci');
  await mkdir(join(installed, 'build', 'Release'), { recursive: true });
  await copyFile(
    join(built, 'build', 'Release', 'better_sqlite3.node'),
    join(installed, 'build', 'Release', 'better_sqlite3.node'),
  );
  if (llama) {
    await npm(
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--ignore-scripts',
        `node-llama-cpp@${llama}`,
      ],
      root,
    );
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const base = join(
    tmpdir(),
    `hearth-acceptance-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`,
  );
  const tarball = await pack(join(base, 'pack'));
  const llama = await packageVersion(join(root, 'node_modules', 'node-llama-cpp'));
  // What was installed: this tarball, with or without node-llama-cpp beside it.
  const sum = `${createHash('sha256')
    .update(await readFile(tarball))
    .digest('hex')} ${llama ?? 'no node-llama-cpp'}`;
  const prefix = join(base, 'prefix');
  const marker = join(prefix, '.installed-from');
  const current = await readFile(marker, 'utf8').catch(() => '');
  if (current !== sum || !(await exists(join(prefix, 'bin', 'hearth')))) {
    process.stderr.write(`acceptance: installing ${tarball} into ${prefix}\n`);
    await install(tarball, prefix, llama);
    await writeFile(marker, sum);
  }
  const bin = join(prefix, 'bin', 'hearth');
  project.provide('hearthBin', bin);
  project.provide('hearthPrefix', prefix);
  const coverage = join(base, 'coverage', String(process.pid));
  await rm(coverage, { recursive: true, force: true });
  project.provide('acceptanceCoverage', coverage);
  return () => checkCoverage(project, bin, coverage);
}

/** After a run of every acceptance file: each command and gateway operation was used by one. */
async function checkCoverage(project: TestProject, bin: string, coverage: string): Promise<void> {
  const files = readdirSync(join(root, 'test', 'acceptance'), { recursive: true }).filter((f) =>
    String(f).endsWith('.test.ts'),
  );
  const ran = project.vitest.state.getTestModules().filter((m) => m.project.name === project.name);
  if (ran.length < files.length) {
    process.stderr.write(
      `acceptance: ${ran.length} of ${files.length} files ran, so whether every command and route has a test is not checked\n`,
    );
    return;
  }
  const { stdout: help } = await run(bin, ['--help']);
  const missing = uncovered(coverage, commandsInHelp(help));
  await rm(coverage, { recursive: true, force: true });
  if (missing.length > 0) {
    // Vitest reports an error thrown here but keeps the run's exit code: this one must fail it.
    process.exitCode = 1;
    throw new Error(
      `No acceptance test (test/acceptance/) runs these through the installed bin:\n  ${missing.join('\n  ')}`,
    );
  }
}
