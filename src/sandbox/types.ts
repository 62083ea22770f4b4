import type { Clock } from '../util/clock.js';
import type { ProcessResult } from './process.js';

export type { ProcessResult } from './process.js';

export type SandboxKind = 'bwrap' | 'docker' | 'podman' | 'seatbelt' | 'none';
export type SandboxMode = 'auto' | SandboxKind;

export interface SandboxOptions {
  /** The directory commands may change; everything else is read-only or invisible, depending on the backend. */
  workspace: string;
  /** Outbound network. Off means no network at all, loopback of the host included. */
  network: boolean;
  /**
   * Environment variables passed through besides the base set (PATH, LANG, LC_*, TERM, TZ).
   * Exact names, or a prefix followed by `*`.
   */
  envAllow: string[];
  /** Memory cap: a cgroup limit for containers, an address-space limit for `none`. */
  memoryMb?: number;
  /** CPU share for containers. */
  cpus?: number;
  /**
   * Host paths made visible read-only, e.g. a toolchain under the home directory (~/.nvm, ~/.cargo)
   * that the hidden home would otherwise take away.
   */
  readOnlyPaths?: string[];
  /** Container image for docker/podman. */
  image?: string;
  /** Drives command timeouts and kill grace periods; the system clock unless a test injects one. */
  clock?: Clock;
}

export interface ExecRequest {
  command: string;
  /** Absolute, inside the workspace. */
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  maxOutputBytes?: number;
  /** Receives stdout and stderr as they arrive, decoded; the result still holds the whole output. */
  onOutput?: (text: string) => void;
}

export interface Sandbox {
  kind: SandboxKind;
  /** One line for `doctor` and status displays. */
  description: string;
  /**
   * Runs a shell command line. Resolves with the output even when the command fails or times out
   * (the whole process tree is killed then); rejects only when nothing could be started, with a
   * SandboxError whose message says what to fix.
   */
  exec(req: ExecRequest): Promise<ProcessResult>;
  /** Releases what the sandbox holds on the host (temp dirs); safe to call twice. */
  dispose(): Promise<void>;
}

export interface SandboxChoice {
  sandbox: Sandbox;
  /** Why this backend, e.g. "bwrap: bubblewrap 0.8.0 works". */
  reason: string;
  /** Present when commands run with weaker isolation than the user may expect. */
  warning?: string;
}

/** A sandbox that cannot be set up or cannot run a command; the message is meant for the user. */
export class SandboxError extends Error {
  override name = 'SandboxError';
}
