/**
 * Git run on the host over a tree the model wrote, with nothing of that tree's choosing able to run
 * a program or move git elsewhere. The object store, index and refs are Hearth's own (GIT_DIR under
 * the Hearth home), never the workspace's `.git`; system and global config are off, and the settings
 * that could run something are pinned on the command line, which outranks every config file. The
 * workspace's `.gitattributes` is outranked by `info/attributes` in the shadow store (written at
 * creation): no filter, text or ident conversion, so a restore gives back the bytes that were kept.
 * The workspace's `.gitignore` files are honoured on purpose: they say what is not worth keeping.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Pinned on every call: each would otherwise come from a config file, or default to running something. */
const PINNED = [
  'core.hooksPath=/dev/null',
  'core.bare=false',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.fileMode=true',
  'core.quotePath=false',
  'core.precomposeUnicode=false',
  'core.longpaths=false',
  'core.sparseCheckout=false',
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  'gc.auto=0',
  'maintenance.auto=false',
  'commit.gpgSign=false',
  'safe.directory=*',
  'user.name=Hearth',
  'user.email=hearth@localhost',
  'advice.addEmbeddedRepo=false',
  'advice.addIgnoredFile=false',
];

/** `* -text -filter ...`: the shadow store keeps bytes as they are, whatever the workspace's attributes say. */
const ATTRIBUTES = '* -text -ident -filter -diff -merge -working-tree-encoding !eol\n';

/** One workspace's shadow repository: its git directory under the Hearth home, and the tree it snapshots. */
export class ShadowGit {
  constructor(
    readonly gitDir: string,
    readonly workTree: string,
  ) {}

  /** Creates the shadow repository when it is not there yet (bare objects, our attributes and excludes). */
  async ensure(): Promise<void> {
    await mkdir(this.gitDir, { recursive: true, mode: 0o700 });
    const init = await this.run(['init', '-q', '--bare', this.gitDir], { plain: true });
    if (!init.ok)
      throw new Error(`could not create the checkpoint store ${this.gitDir}: ${init.stderr.trim()}`);
    await mkdir(path.join(this.gitDir, 'info'), { recursive: true });
    await writeFile(path.join(this.gitDir, 'info', 'attributes'), ATTRIBUTES);
    // Hearth's own folder in the workspace holds the user's settings, not the agent's work.
    await writeFile(path.join(this.gitDir, 'info', 'exclude'), '/.hearth/\n');
    await writeFile(path.join(this.gitDir, 'workspace'), `${this.workTree}\n`);
  }

  /**
   * Runs git over the workspace with the shadow store; `index` picks the index file (one per
   * session, so sessions on one workspace never wait on each other's lock). Resolves in every case.
   */
  run(
    args: string[],
    opts: { index?: string; input?: string; plain?: boolean; timeoutMs?: number } = {},
  ): Promise<GitResult> {
    const where = opts.plain ? [] : [`--git-dir=${this.gitDir}`, `--work-tree=${this.workTree}`];
    const argv = [...PINNED.flatMap((setting) => ['-c', setting]), ...where, ...args];
    return new Promise((resolve) => {
      const child = execFile(
        'git',
        argv,
        {
          cwd: this.workTree,
          env: this.env(opts.index),
          timeout: opts.timeoutMs ?? 120_000,
          killSignal: 'SIGKILL',
          maxBuffer: 256 * 1024 * 1024,
          encoding: 'utf8',
        },
        (err, stdout, stderr) => resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr) }),
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  /** Like `run`, but rejects with git's complaint. */
  async must(args: string[], opts: { index?: string; input?: string } = {}): Promise<string> {
    const result = await this.run(args, opts);
    if (!result.ok) throw new Error(`git ${args[0]} failed: ${result.stderr.trim().split('\n')[0] ?? ''}`);
    return result.stdout;
  }

  /** Only what git needs: no GIT_* from the caller, no user or system config, no pager, no prompt. */
  private env(index: string | undefined): NodeJS.ProcessEnv {
    const empty = path.join(this.gitDir, 'no-home');
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LC_ALL: 'C',
      HOME: empty,
      XDG_CONFIG_HOME: empty,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_PAGER: 'cat',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_LITERAL_PATHSPECS: '0',
      ...(index !== undefined ? { GIT_INDEX_FILE: path.join(this.gitDir, index) } : {}),
    };
  }
}
