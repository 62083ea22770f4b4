import {
  type CgroupLimits,
  type CgroupSupport,
  CommandCgroups,
  type Controller,
  detectCgroups,
  sweepDeadCgroups,
} from './cgroup.js';
import type { ProcessResult } from './process.js';
import { CommandScope, detectSystemdScope, type ScopeSupport } from './systemd-scope.js';

/**
 * Where each command's processes are held: a control group of its own with the limits on the whole
 * tree, removed (everything in it killed) when the command ends. Chosen once per sandbox, in order
 * of preference:
 * 1. a cgroup v2 child of Hearth's own cgroup, when that hands the controllers down (delegated, or
 *    a writable cgroup such as a container's root): cheapest and exact;
 * 2. a transient systemd scope, where systemd is the init and its scopes enforce the limits (a
 *    desktop's user manager, a systemd server): systemd owns that tree, so it is asked;
 * 3. a cgroup v1 child in each controller's hierarchy, when writable (root without systemd, as in
 *    many containers and CI machines).
 * With none, the process count falls back to RLIMIT_NPROC where it binds (not for root); limits.ts
 * says what is enforced.
 */

/** One command's group. */
export interface CommandGroup {
  /** A shell line that runs `argv` inside the group. */
  wrap(argv: readonly string[]): string;
  /** How many forks the process limit refused so far (0 where it cannot be read). */
  refusedForks(): Promise<number>;
  /** Kills every process left in the group and removes it. */
  remove(): Promise<void>;
}

/**
 * Runs a command in `group` (when there is one), tells the model when the process limit refused
 * forks, and removes the group, killing whatever the command left running.
 */
export async function inGroup(
  group: CommandGroup | null,
  maxProcesses: number | undefined,
  run: (group: CommandGroup | null) => Promise<ProcessResult>,
): Promise<ProcessResult> {
  try {
    const result = await run(group);
    const refused = (await group?.refusedForks()) ?? 0;
    if (refused === 0) return result;
    return { ...result, notices: [...(result.notices ?? []), processLimitNotice(refused, maxProcesses)] };
  } finally {
    await group?.remove();
  }
}

function processLimitNotice(refused: number, maxProcesses: number | undefined): string {
  return (
    `This command hit the limit of ${maxProcesses ?? 'its'} processes at once (sandbox.max_processes): ` +
    `${refused} of its attempts to start one failed. Run fewer at a time (make -j4, xargs -P4); if the task ` +
    'needs more, ask the user to raise sandbox.max_processes in the Hearth config.'
  );
}

export interface CommandGroups {
  /** What holds each controller, for doctor: "cgroup v2", "systemd scope", "cgroup v1". */
  heldBy: Partial<Record<Controller, string>>;
  /** A group for one command with these limits (those this machine holds); null when none applies. */
  open(limits: CgroupLimits): Promise<CommandGroup | null>;
  /** Removes groups left by Hearth processes killed mid-command. */
  sweep(): Promise<number>;
}

export interface GroupProbes {
  cgroups?: () => Promise<CgroupSupport>;
  systemd?: () => Promise<ScopeSupport | null>;
}

export async function detectCommandGroups(
  hostEnv: NodeJS.ProcessEnv,
  probes: GroupProbes = {},
): Promise<CommandGroups> {
  const cgroups = await (probes.cgroups ?? detectCgroups)();
  if (cgroups.pids?.version !== 2) {
    const scope = await (probes.systemd ?? (() => detectSystemdScope(hostEnv)))().catch(() => null);
    if (scope?.controllers.includes('pids')) return scopeGroups(scope);
  }
  return cgroupGroups(cgroups);
}

function cgroupGroups(support: CgroupSupport): CommandGroups {
  const heldBy: Partial<Record<Controller, string>> = {};
  for (const c of ['memory', 'pids', 'cpu'] as const)
    if (support[c]) heldBy[c] = `cgroup v${support[c]!.version}`;
  return {
    heldBy,
    open: (limits) => CommandCgroups.create(support, limits),
    sweep: () => sweepDeadCgroups(support),
  };
}

function scopeGroups(scope: ScopeSupport): CommandGroups {
  const heldBy: Partial<Record<Controller, string>> = {};
  for (const c of scope.controllers) heldBy[c] = `systemd scope${scope.user ? ' (user manager)' : ''}`;
  return {
    heldBy,
    open: async (limits) =>
      limits.maxProcesses === undefined && limits.memoryBytes === undefined && limits.cpus === undefined
        ? null
        : new CommandScope(scope, limits),
    // systemd collects an emptied scope itself (--collect).
    sweep: async () => 0,
  };
}
