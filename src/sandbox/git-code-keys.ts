/**
 * Git settings whose value git runs as a program, or which send git elsewhere (another work tree,
 * more config). A repository can carry any of them in its own config, so whoever runs git on a
 * repository the sandbox could write runs the sandbox's code unless these are neutralised. Two users:
 * the git tools when there is no sandbox (they override these for one call), and the check after a
 * sandboxed command that created a repository (it removes them before the user's own git meets them).
 *
 * Compiled from git-config(1), gitattributes(5) and githooks(5) of git 2.39-2.47. New releases may add
 * more; the sandbox, not this list, is the boundary (docs/security.md#internals).
 */

/** Whole keys, lower-case. */
const EXACT = new Set([
  'core.fsmonitor',
  'core.hookspath',
  'core.pager',
  'core.editor',
  'core.sshcommand',
  'core.askpass',
  'core.gitproxy',
  'core.alternaterefscommand',
  'core.worktree',
  'sequence.editor',
  'diff.external',
  'credential.helper',
  'gpg.program',
  'gpg.ssh.defaultkeycommand',
  'uploadpack.packobjectshook',
  'include.path',
  'protocol.allow',
  'init.templatedir',
]);

/** `section.<name>.key` forms: section, then the keys that run something. */
const PER_NAME: Record<string, readonly string[]> = {
  filter: ['clean', 'smudge', 'process'],
  diff: ['textconv', 'command'],
  merge: ['driver'],
  credential: ['helper'],
  gpg: ['program'],
  includeif: ['path'],
  remote: ['uploadpack', 'receivepack'],
  difftool: ['cmd'],
  mergetool: ['cmd'],
  man: ['cmd'],
  browser: ['cmd'],
  trailer: ['command', 'cmd'],
  protocol: ['allow'],
};

/** Sections whose every key may run a program (pager.<command>). */
const WHOLE_SECTIONS = new Set(['pager']);

/**
 * Whether a config key (as `git config --list` prints it: section and key lower-case, a subsection
 * as written) can make git run a program or leave the repository. A value starting with `!` makes an
 * alias or a submodule update method a shell command; without a value those count as risky.
 */
export function isRiskyGitKey(key: string, value?: string): boolean {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first < 0) return false;
  const section = key.slice(0, first).toLowerCase();
  const name = key.slice(last + 1).toLowerCase();
  if (WHOLE_SECTIONS.has(section)) return true;
  if (section === 'alias' || (section === 'submodule' && name === 'update')) {
    return value === undefined || value.trimStart().startsWith('!');
  }
  if (EXACT.has(key.toLowerCase())) return true;
  return first !== last && (PER_NAME[section]?.includes(name) ?? false);
}
