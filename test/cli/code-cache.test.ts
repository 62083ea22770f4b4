import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { version } from '../../src/util/version.js';
import { cliPath } from '../support/cli.js';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('code-cache');

/** The code cache folders (one per build and Node version) and their files, under `root`. */
async function cacheFiles(root = join(cli.hearthHome, 'cache', 'code')): Promise<string[]> {
  const dirs = await readdir(root).catch(() => []);
  const files = await Promise.all(
    dirs.map((d) => readdir(join(root, d)).then((f) => f.map((n) => `${d}/${n}`))),
  );
  return files.flat();
}

/** The caches kept beside the package (a new home reads them), which earlier runs of this build may have left. */
const besidePackage = () => cacheFiles(join(dirname(cliPath), '..', '..', '.code-cache'));

describe('the built CLI with its code cache', () => {
  it('keeps the cache in the Hearth home (or beside the package) on a first run and answers the same from it', async () => {
    await cli.serve([reply().text('First.'), reply().text('Second.')]);
    const first = await cli.run(['hi']);
    expect(first).toMatchObject({ code: 0, stdout: 'First.\n' });
    // A chunk whose cache lies beside the package already is read from there, not cached again.
    const home = await cacheFiles();
    const files = [...new Set([...home, ...(await besidePackage())])];
    // One folder for this build and Node version, a cache per chunk the run loaded.
    expect(new Set(files.map((f) => f.split('/')[0]))).toEqual(
      new Set([expect.stringMatching(new RegExp(`^${process.version}-${process.arch}-[0-9a-f]{16}$`))]),
    );
    expect(files.filter((f) => f.endsWith('.cjs.v8')).length).toBeGreaterThan(5);
    const second = await cli.run(['hi']);
    expect(second).toMatchObject({ code: 0, stdout: 'Second.\n' });
    // Nothing new in the home: the second run used what the first left.
    expect(await cacheFiles()).toEqual(home);
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
