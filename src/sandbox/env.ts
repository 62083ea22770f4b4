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

const IDENTITY_VARIABLES = [
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
];

/** The user's commit identity as the host knows it, for the sandbox's git. */
export interface GitIdentity {
  /** `user.name` and `user.email` from the user's own (global, then system) git config. */
  name?: string;
  email?: string;
  /** GIT_AUTHOR_* / GIT_COMMITTER_* the user exported, passed on as they are. */
  variables: Record<string, string>;
}

/**
 * The user's commit identity. Inside, the home (and its ~/.gitconfig) is hidden, and git refuses to
 * commit without an identity. Read from the user's global and system config only, from outside any
 * repository: never from the workspace's repository, whose config the sandbox can write. Sandboxes
 * give it to their git as ~/.gitconfig (identityGitconfig), where a repository's own identity still
 * wins, as it would on the host.
 */
export async function hostGitIdentity(source: NodeJS.ProcessEnv): Promise<GitIdentity> {
  const env: NodeJS.ProcessEnv = { ...source };
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT'])
    delete env[name];
  const lookup = async (key: string): Promise<string | undefined> => {
    for (const scope of ['--global', '--system']) {
      const r = await runHostCommand('git', ['config', scope, '--get', key], {
        cwd: '/',
        timeoutMs: 3000,
        env,
      });
      const value = r.stdout.trim();
      if (r.ok && value !== '') return value;
    }
    return undefined;
  };
  const [name, email] = await Promise.all([lookup('user.name'), lookup('user.email')]);
  const variables: Record<string, string> = {};
  for (const variable of IDENTITY_VARIABLES) {
    const value = source[variable];
    if (value !== undefined && value !== '') variables[variable] = value;
  }
  return { name, email, variables };
}

/** The identity as a git config file, or undefined when there is none to write. */
export function identityGitconfig(identity: GitIdentity): string | undefined {
  const lines: string[] = [];
  if (identity.name !== undefined) lines.push(`\tname = ${quoteConfigValue(identity.name)}`);
  if (identity.email !== undefined) lines.push(`\temail = ${quoteConfigValue(identity.email)}`);
  return lines.length === 0 ? undefined : `[user]\n${lines.join('\n')}\n`;
}

/** A git config value in double quotes, so that `#`, `;` and leading spaces stay part of it. */
function quoteConfigValue(value: string): string {
  const escaped = value
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('\n', '\\n')
    .replaceAll('\t', '\\t');
  return `"${escaped}"`;
}
