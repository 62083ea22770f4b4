import { enableSandboxAdvice, type SystemFacts, systemFacts } from './advice.js';
import { createBwrapSandbox } from './bwrap.js';
import { createContainerSandbox } from './docker.js';
import { createNoneSandbox, NO_SANDBOX_WARNING } from './none.js';
import { createSeatbeltSandbox } from './seatbelt.js';
import { superviseSandbox } from './supervised.js';
import {
  type Sandbox,
  type SandboxChoice,
  SandboxError,
  type SandboxKind,
  type SandboxMode,
  type SandboxOptions,
} from './types.js';

/** Builds one backend, or throws a SandboxError saying why it cannot run here. */
export type SandboxFactory = (opts: SandboxOptions) => Promise<Sandbox>;

const DEFAULT_FACTORIES: Readonly<Record<SandboxKind, SandboxFactory>> = {
  bwrap: createBwrapSandbox,
  docker: (opts) => createContainerSandbox('docker', opts),
  podman: (opts) => createContainerSandbox('podman', opts),
  seatbelt: createSeatbeltSandbox,
  none: createNoneSandbox,
};

/** What `auto` tries, in order, before falling back to no sandbox. */
export function autoOrder(platform: NodeJS.Platform): SandboxKind[] {
  if (platform === 'linux') return ['bwrap', 'docker', 'podman'];
  if (platform === 'darwin') return ['seatbelt', 'docker', 'podman'];
  return ['docker', 'podman'];
}

export interface SelectDeps {
  platform?: NodeJS.Platform;
  /** The system's facts for the advice on enabling a sandbox; read from the machine by default. */
  facts?: SystemFacts;
  /** Replaces backends, for tests that decide without touching the machine. */
  factories?: Partial<Record<SandboxKind, SandboxFactory>>;
}

/** The reason given at the question for each command when `auto` found no sandbox. */
export const UNSANDBOXED_COMMAND_REASON =
  'no sandbox could be set up, so this command would run directly on your machine';

/**
 * The sandbox for a session. An explicit mode gets that backend or a SandboxError; `auto` takes the
 * first backend that works on this machine and says why the ones before it did not, and only then
 * runs unsandboxed: with a warning that says how to enable a sandbox here, and with every command
 * needing the user's answer (only an explicit `none` runs commands unconfined unasked).
 */
export async function createSandbox(
  mode: SandboxMode,
  opts: SandboxOptions,
  deps: SelectDeps = {},
): Promise<SandboxChoice> {
  const factories = { ...DEFAULT_FACTORIES, ...deps.factories };
  if (mode !== 'auto') {
    const sandbox = await build(factories[mode], opts, mode);
    const reason = `${mode}: requested${detailOf(sandbox) ? ` (${detailOf(sandbox)})` : ''}`;
    return withLimitWarning({ sandbox, reason, ...(mode === 'none' ? { warning: NO_SANDBOX_WARNING } : {}) });
  }

  const failures: string[] = [];
  for (const kind of autoOrder(deps.platform ?? process.platform)) {
    try {
      const sandbox = await build(factories[kind], opts, kind);
      const detail = detailOf(sandbox);
      return withLimitWarning({ sandbox, reason: `${kind}: ${detail ? `${detail} works` : 'works'}` });
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  const sandbox = await build(factories.none, opts, 'none');
  const advice = enableSandboxAdvice(failures, deps.facts ?? (await systemFacts()));
  return withLimitWarning({
    sandbox,
    reason: `none: ${failures.join('; ')}`,
    warning:
      `${NO_SANDBOX_WARNING} Every command asks before it runs, whatever the permission mode ` +
      `(set sandbox: "none" to run them unasked). To enable the sandbox: ${advice}`,
    commandsNeedApproval: UNSANDBOXED_COMMAND_REASON,
    advice,
  });
}

/** Limits that guard the machine against a runaway command; said at the first command when not enforced. */
const RUNAWAY_LIMITS = ['processes', 'disk writes'];

/**
 * Adds to the choice's warning (said once, before the first command) each runaway limit this
 * machine cannot enforce, so that nobody relies on one silently missing.
 */
function withLimitWarning(choice: SandboxChoice): SandboxChoice {
  const missing = choice.sandbox.safeguards.filter((g) => !g.active && RUNAWAY_LIMITS.includes(g.name));
  if (missing.length === 0) return choice;
  const text = `Not enforced here: ${missing.map((g) => `${g.name} limit (${g.detail})`).join('; ')}. \`hearth doctor\` lists every limit.`;
  return { ...choice, warning: choice.warning ? `${choice.warning} ${text}` : text };
}

async function build(factory: SandboxFactory, opts: SandboxOptions, kind: SandboxKind): Promise<Sandbox> {
  try {
    return await superviseSandbox(await factory(opts), {
      workspace: opts.workspace,
      maxWriteMb: opts.maxWriteMb,
    });
  } catch (err) {
    if (err instanceof SandboxError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new SandboxError(`${kind}: could not be set up (${message})`);
  }
}

/** Descriptions start "kind (detail): ..."; the detail names the tool and its version. */
function detailOf(sandbox: Sandbox): string {
  return /^\S+ \(([^)]*)\)/.exec(sandbox.description)?.[1] ?? '';
}
