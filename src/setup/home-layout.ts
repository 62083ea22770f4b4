import path from 'node:path';
import { ConfigError } from '../config/errors.js';
import { isWithin } from '../sandbox/workspace.js';
import { realpathLoose } from '../util/real-path.js';

/**
 * Refuses a Hearth home or database inside the workspace. Sandboxed commands may write anywhere in
 * the workspace, and the home holds what later runs on the host unsandboxed (config with hooks and
 * MCP servers, skills, the CLI's code cache) while the database holds the user's "always" answers.
 * `<workspace>/.hearth` is the one exception: the sandbox protects that name itself
 * (src/sandbox/protected-paths.ts), which is what makes `hearth` in one's home folder safe.
 */
export async function checkHomeOutsideWorkspace(
  workspace: string,
  places: { home: string; dbPath?: string },
): Promise<void> {
  const protectedDir = path.join(workspace, '.hearth');
  const check = async (what: string, place: string, remedy: string) => {
    const found = await realpathLoose(path.resolve(place));
    const real = found.ok ? found.real : path.resolve(place);
    if (!isWithin(workspace, real) || isWithin(protectedDir, real)) return;
    throw new ConfigError(
      `${what} ${place} lies inside the workspace ${workspace}, where sandboxed commands can write: ` +
        `they could change what Hearth later runs or allows on this machine. ${remedy}, or choose ` +
        'another folder to work in with -C DIR.',
    );
  };
  await check(
    'The Hearth home',
    places.home,
    'Set HEARTH_HOME to a folder outside the workspace (default ~/.hearth)',
  );
  if (places.dbPath !== undefined && places.dbPath !== ':memory:') {
    await check('The database', places.dbPath, 'Set db_path (or HEARTH_DB) to a file outside the workspace');
  }
}
