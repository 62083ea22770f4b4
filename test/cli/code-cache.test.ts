import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { version } from '../../src/util/version.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('code-cache');

/** The code cache folders (one per build and Node version) and their files, under the harness's Hearth home. */
async function cacheFiles(): Promise<string[]> {
  const root = join(cli.hearthHome, 'cache', 'code');
  const dirs = await readdir(root).catch(() => []);
  const files = await Promise.all(
    dirs.map((d) => readdir(join(root, d)).then((f) => f.map((n) => `${d}/${n}`))),
  );
  return files.flat();
}

describe('the built CLI with its code cache', () => {
  it('writes the cache in the Hearth home on a first run and answers the same from it', async () => {
    await cli.serve([reply().text('First.'), reply().text('Second.')]);
    const first = await cli.run(['hi']);
    expect(first).toMatchObject({ code: 0, stdout: 'First.\n' });
    const files = await cacheFiles();
    // One folder for this build and Node version, a cache per chunk the run loaded.
    expect(new Set(files.map((f) => f.split('/')[0]))).toEqual(
      new Set([expect.stringMatching(new RegExp(`^${process.version}-${process.arch}-[0-9a-f]{16}$`))]),
    );
    expect(files.filter((f) => f.endsWith('.cjs.v8')).length).toBeGreaterThan(5);
    const second = await cli.run(['hi']);
    expect(second).toMatchObject({ code: 0, stdout: 'Second.\n' });
    expect(await cacheFiles()).toEqual(files);
  });

  it('keeps no code from a relative HEARTH_HOME, which would land in the folder it runs in', async () => {
    const r = await cli.run(['--version'], { env: { HEARTH_HOME: 'relative-home' } });
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(await readdir(cli.workspace)).toEqual([]);
  });

  it('writes none with NODE_DISABLE_COMPILE_CACHE set', async () => {
    const r = await cli.run(['--version'], { env: { NODE_DISABLE_COMPILE_CACHE: '1' } });
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(await cacheFiles()).toEqual([]);
  });
});
