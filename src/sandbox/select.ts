import { createBwrapSandbox } from './bwrap.js';
import { createContainerSandbox } from './docker.js';
import { createNoneSandbox, NO_SANDBOX_WARNING } from './none.js';
import { createSeatbeltSandbox } from './seatbelt.js';
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
  /** Replaces backends, for tests that decide without touching the machine. */
  factories?: Partial<Record<SandboxKind, SandboxFactory>>;
}

/**
 * The sandbox for a session. An explicit mode gets that backend or a SandboxError; `auto` takes the
 * first backend that works on this machine and says why the ones before it did not, and only then
 * runs unsandboxed, with a warning to show the user.
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
    return mode === 'none' ? { sandbox, reason, warning: NO_SANDBOX_WARNING } : { sandbox, reason };
  }

  const failures: string[] = [];
  for (const kind of autoOrder(deps.platform ?? process.platform)) {
    try {
      const sandbox = await build(factories[kind], opts, kind);
      const detail = detailOf(sandbox);
      return { sandbox, reason: `${kind}: ${detail ? `${detail} works` : 'works'}` };
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  const sandbox = await build(factories.none, opts, 'none');
  return { sandbox, reason: `none: ${failures.join('; ')}`, warning: NO_SANDBOX_WARNING };
}

async function build(factory: SandboxFactory, opts: SandboxOptions, kind: SandboxKind): Promise<Sandbox> {
  try {
    return await factory(opts);
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
