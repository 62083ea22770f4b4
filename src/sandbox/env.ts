import { runHostCommand } from './host-command.js';

/** What every sandboxed command gets from the host environment, whatever the configuration. */
const BASE_ENV_ALLOW: readonly string[] = ['PATH', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TZ'];

/**
 * Never passed, even when a configured pattern matches: each makes a shell or the dynamic loader run
 * code of the variable's choosing.
 */
const NEVER_PASS = new Set(['BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'LD_PRELOAD', 'LD_AUDIT', 'SHELLOPTS']);

export const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface SandboxEnvInput {
  /** The host environment to pick from, normally process.env. */
  source: NodeJS.ProcessEnv;
  /** Configured names or `PREFIX*` patterns, added to BASE_ENV_ALLOW. */
  allow: readonly string[];
  /** HOME as seen inside the sandbox. */
  home: string;
  user: string;
  /** Set last, over anything picked from the source (TMPDIR, git identity, ...). */
  extra?: Record<string, string>;
}

/** True when `name` is listed exactly or matches a `PREFIX*` pattern. */
export function envNameAllowed(name: string, patterns: readonly string[]): boolean {
  if (NEVER_PASS.has(name) || name.startsWith('BASH_FUNC_')) return false;
  return patterns.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

/**
 * The whole environment of a sandboxed command: an allowlist of the host's variables (so API keys
 * and tokens exported in the user's shell stay out), plus the identity the sandbox gives itself.
 */
export function buildSandboxEnv(input: SandboxEnvInput): Record<string, string> {
  const patterns = [...BASE_ENV_ALLOW, ...input.allow];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.source)) {
    if (value !== undefined && envNameAllowed(name, patterns)) env[name] = value;
  }
  env.PATH ??= FALLBACK_PATH;
  env.HOME = input.home;
  env.USER = input.user;
  env.LOGNAME = input.user;
  return { ...env, ...input.extra };
}

const IDENTITY_KEYS = [
  ['GIT_AUTHOR_NAME', 'user.name'],
  ['GIT_AUTHOR_EMAIL', 'user.email'],
  ['GIT_COMMITTER_NAME', 'user.name'],
  ['GIT_COMMITTER_EMAIL', 'user.email'],
] as const;

/**
 * The commit identity the user has on the host, as GIT_AUTHOR_* / GIT_COMMITTER_* variables. Inside,
 * the user's ~/.gitconfig is hidden with the rest of the home, and git refuses to commit without an
 * identity. Read in the workspace so a repository-local identity wins, as it would on the host.
 * Variables the user already exported take precedence; `git config` itself runs no hooks.
 */
export async function hostGitIdentity(
  workspace: string,
  source: NodeJS.ProcessEnv,
): Promise<Record<string, string>> {
  const lookup = async (key: string): Promise<string | undefined> => {
    let r = await runHostCommand('git', ['config', '--get', key], {
      cwd: workspace,
      timeoutMs: 3000,
      env: source,
    });
    if (!r.ok && r.stderr.trim() !== '') {
      // Git refuses a repository it deems unsafe (owned by someone else); the user's own identity still counts.
      r = await runHostCommand('git', ['config', '--get', key], { cwd: '/', timeoutMs: 3000, env: source });
    }
    const value = r.stdout.trim();
    return r.ok && value !== '' ? value : undefined;
  };
  const [name, email] = await Promise.all([lookup('user.name'), lookup('user.email')]);
  const found: Record<string, string | undefined> = { 'user.name': name, 'user.email': email };
  const identity: Record<string, string> = {};
  for (const [variable, key] of IDENTITY_KEYS) {
    const value = source[variable] ?? found[key];
    if (value !== undefined) identity[variable] = value;
  }
  return identity;
}
