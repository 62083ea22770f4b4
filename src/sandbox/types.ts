import type { Clock } from '../util/clock.js';
import type { LinkedRepo } from './linked-repo.js';
import type { ProcessIo, ProcessResult } from './process.js';

export type { ProcessResult } from './process.js';

export type SandboxKind = 'bwrap' | 'docker' | 'podman' | 'seatbelt' | 'none';
export type SandboxMode = 'auto' | SandboxKind;

export interface SandboxOptions {
  /** The directory commands may change; everything else is read-only or invisible, depending on the backend. */
  workspace: string;
  /** Outbound network. Off means no network at all, loopback of the host included. */
  network: boolean;
  /**
   * With `network` off: the domains (`registry.npmjs.org`, `*.pythonhosted.org`) commands may still
   * reach, through Hearth's proxy (domain-proxy.ts; bwrap only).
   */
  allowDomains?: string[];
  /** Non-public hosts or ranges the proxy may still connect to (`web.allow_private`). */
  privateAllow?: string[];
  /**
   * Environment variables passed through besides the base set (PATH, LANG, LC_*, TERM, TZ).
   * Exact names, or a prefix followed by `*`.
   */
  envAllow: string[];
  /**
   * Memory cap for all of a command's processes where a cgroup can hold it (containers, bwrap with a
   * writable cgroup), else per process as address space (limits.ts).
   */
  memoryMb?: number;
  /** CPU share, where a cgroup can hold it. */
  cpus?: number;
  /** Processes (and threads) a command may have at once. */
  maxProcesses?: number;
  /** Size of each private temp filesystem (/tmp, /var/tmp, the hidden home). */
  tmpMb?: number;
  /** How much one command may grow the workspace's disk, MB, before it is stopped (supervised.ts). */
  maxWriteMb?: number;
  /**
   * The host environment that allowed variables, the git identity and (for `none`) HOME come from;
   * default this process's.
   */
  hostEnv?: NodeJS.ProcessEnv;
  /**
   * Host paths made visible read-only, e.g. a toolchain under the home directory (~/.nvm, ~/.cargo)
   * that the hidden home would otherwise take away.
   */
  readOnlyPaths?: string[];
  /** Container image for docker/podman. */
  image?: string;
  /** Drives command timeouts and kill grace periods; the system clock unless a test injects one. */
  clock?: Clock;
  /**
   * The main repository of a worktree Hearth created (linked-repo.ts): git inside may commit on the
   * worktree's branch; the repository's hooks and config stay out of reach. bwrap and none only.
   */
  linkedRepo?: LinkedRepo;
}

export interface ExecRequest extends ProcessIo {
  command: string;
  /** Absolute, inside the workspace. */
  cwd: string;
}

/** One protection or limit, as `doctor` reports it. */
export interface Safeguard {
  /** Short: "memory", "processes", "protected files". */
  name: string;
  /** False: wanted (configured, or a default) but not enforced on this system; `detail` says why. */
  active: boolean;
  detail: string;
}

export interface Sandbox {
  kind: SandboxKind;
  /** One line for `doctor` and status displays. */
  description: string;
  /** What this backend protects and limits here, enforced or not. */
  safeguards: Safeguard[];
  /**
   * Runs a shell command line. Resolves with the output even when the command fails or times out
   * (the whole process tree is killed then); rejects only when nothing could be started, with a
   * SandboxError whose message says what to fix.
   */
  exec(req: ExecRequest): Promise<ProcessResult>;
  /** The linked repository git may use from this workspace (a Hearth worktree's), when granted. */
  linkedRepo?: LinkedRepo;
  /** Releases what the sandbox holds on the host (temp dirs); safe to call twice. */
  dispose(): Promise<void>;
}

export interface SandboxChoice {
  sandbox: Sandbox;
  /** Why this backend, e.g. "bwrap: bubblewrap 0.8.0 works". */
  reason: string;
  /** Present when commands run with weaker isolation than the user may expect. */
  warning?: string;
  /**
   * Set when `auto` found no sandbox: commands then run on the host only with the user's answer,
   * whatever the permission mode. The text is the reason given at the question.
   */
  commandsNeedApproval?: string;
  /** How to get a working sandbox on this system, when `auto` found none. */
  advice?: string;
}

/**
 * A sandbox, or its set-up still under way. Setting one up costs a trial run that the first request
 * need not wait for: the agent loop awaits it before the first tool call, and says the choice's
 * warning then.
 */
export type SandboxSource = Sandbox | (() => Promise<SandboxChoice>);

/** A sandbox that cannot be set up or cannot run a command; the message is meant for the user. */
export class SandboxError extends Error {
  override name = 'SandboxError';
}
