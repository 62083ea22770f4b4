import { runHostCommand } from '../sandbox/host-command.js';

/**
 * Git on the host, over the user's own main checkout, for what the user asked Hearth to do there
 * (`git worktree add`, a diff stat): the same as the user typing it, with the user's config and
 * hooks, which the sandbox cannot write (sandbox/protected-paths.ts, linked-repo.ts). Never run on a
 * worktree's files for the model; variables a parent git left behind are dropped.
 */
export async function hostGit(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const clean: NodeJS.ProcessEnv = { ...env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0' };
  for (const name of Object.keys(clean)) {
    if (
      /^GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CONFIG_PARAMETERS|CONFIG_COUNT|NAMESPACE|PREFIX)$/.test(
        name,
      )
    )
      delete clean[name];
  }
  const r = await runHostCommand('git', ['-C', cwd, ...args], { timeoutMs: 60_000, env: clean });
  if (r.missing) return { ok: false, stdout: '', stderr: 'git is not installed or not on PATH' };
  return { ok: r.ok, stdout: r.stdout, stderr: r.stderr };
}
