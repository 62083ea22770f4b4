/**
 * A task's check runs in a sandbox of its own over the finished workspace: it may write only
 * there, has no network and none of the user's environment, so a check (or what the model left in
 * the workspace for it to run) cannot reach anything outside. It is copied in under a name the
 * model never saw, made executable (a packed tarball may not keep the mode), and removed after.
 */
import { chmod, copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { createSandbox } from '../sandbox/select.js';
import { type Sandbox, SandboxError } from '../sandbox/types.js';

const CHECK_NAME = '.hearth-eval-check';
const CHECK_TIMEOUT_MS = 120_000;
/** What is kept of a check's output: its end says why it failed. */
const KEPT_OUTPUT = 4000;

export interface CheckResult {
  exitCode: number;
  output: string;
}

/** A sandbox confined to `workspace` with no network; refuses where none can be set up. */
export async function checkSandbox(config: Pick<Config, 'sandbox'>, workspace: string): Promise<Sandbox> {
  const mode = config.sandbox.mode === 'none' ? 'auto' : config.sandbox.mode;
  const choice = await createSandbox(mode, {
    workspace,
    network: false,
    envAllow: [],
    memoryMb: config.sandbox.memory_mb,
    maxProcesses: config.sandbox.max_processes,
    tmpMb: config.sandbox.tmp_mb,
  });
  if (choice.sandbox.kind === 'none') {
    await choice.sandbox.dispose();
    throw new SandboxError(
      `hearth eval runs checks and tasks only in a sandbox, and none works here (${choice.reason}). ${choice.advice ?? ''}`.trim(),
    );
  }
  return choice.sandbox;
}

/** Runs the task's check in the finished workspace. */
export async function runCheck(
  config: Pick<Config, 'sandbox'>,
  check: string,
  workspace: string,
): Promise<CheckResult> {
  const copy = join(workspace, CHECK_NAME);
  await copyFile(check, copy);
  await chmod(copy, 0o755);
  const sandbox = await checkSandbox(config, workspace);
  try {
    const result = await sandbox.exec({
      command: `./${CHECK_NAME}`,
      cwd: workspace,
      timeoutMs: CHECK_TIMEOUT_MS,
    });
    const output = result.output.length > KEPT_OUTPUT ? result.output.slice(-KEPT_OUTPUT) : result.output;
    const exitCode = result.timedOut ? 124 : (result.exitCode ?? 128);
    return { exitCode, output: result.timedOut ? `${output}\n(the check timed out)` : output };
  } finally {
    await sandbox.dispose();
    await rm(copy, { force: true });
  }
}
