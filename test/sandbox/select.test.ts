import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_SANDBOX_WARNING } from '../../src/sandbox/none.js';
import {
  autoOrder,
  createSandbox,
  type SandboxFactory,
  UNSANDBOXED_COMMAND_REASON,
} from '../../src/sandbox/select.js';
import { type Sandbox, SandboxError, type SandboxKind } from '../../src/sandbox/types.js';
import { bwrapUnavailable } from './support.js';

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hearth-select-')));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const opts = () => ({ workspace: dir, network: false, envAllow: [] });

/** A backend that works and describes itself the way the real ones do. */
const works =
  (kind: SandboxKind, detail: string): SandboxFactory =>
  async () =>
    ({
      kind,
      description: `${kind} (${detail}): test double`,
      safeguards: [],
      exec: async () => {
        throw new Error('not used');
      },
      dispose: async () => {},
    }) satisfies Sandbox;

const fails =
  (message: string): SandboxFactory =>
  async () => {
    throw new SandboxError(message);
  };

describe('auto selection', () => {
  it('tries bwrap, then docker, then podman on Linux; seatbelt on macOS; containers elsewhere', () => {
    expect(autoOrder('linux')).toEqual(['bwrap', 'docker', 'podman']);
    expect(autoOrder('darwin')[0]).toBe('seatbelt');
    expect(autoOrder('win32')).toEqual(['docker', 'podman']);
  });

  it('takes bwrap when it works', async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'linux',
      factories: { bwrap: works('bwrap', 'bubblewrap 0.8.0'), docker: fails('unused') },
    });
    expect(choice.sandbox.kind).toBe('bwrap');
    expect(choice.reason).toBe('bwrap: bubblewrap 0.8.0 works');
    expect(choice.warning).toBeUndefined();
  });

  it('falls back to docker and says why bwrap was passed over', async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'linux',
      factories: {
        bwrap: fails('bwrap is installed but cannot run here: bwrap: setting up uid map: Permission denied'),
        docker: works('docker', 'Docker version 27.1.1'),
      },
    });
    expect(choice.sandbox.kind).toBe('docker');
    expect(choice.reason).toBe('docker: Docker version 27.1.1 works');
  });

  it('ends with no sandbox, every reason, commands that ask, and how to install bubblewrap', async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'linux',
      facts: { platform: 'linux', distro: ['ubuntu', 'debian'] },
      factories: {
        bwrap: fails('bwrap not installed'),
        docker: fails('docker not installed'),
        podman: fails('podman is installed but not running (cannot connect)'),
      },
    });
    expect(choice.sandbox.kind).toBe('none');
    expect(choice.reason).toBe(
      'none: bwrap not installed; docker not installed; podman is installed but not running (cannot connect)',
    );
    expect(choice.warning).toMatch(
      new RegExp(`^${NO_SANDBOX_WARNING.replace(/[.()]/g, '\\$&')} Every command asks`),
    );
    expect(choice.warning).toMatch(
      /To enable the sandbox: Install bubblewrap: sudo apt install bubblewrap\.$/,
    );
    expect(choice.commandsNeedApproval).toBe(UNSANDBOXED_COMMAND_REASON);
  });

  it("names Ubuntu's AppArmor switch and profile when user namespaces are what fails", async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'linux',
      facts: { platform: 'linux', distro: ['ubuntu'], apparmorRestrictsUserns: '1' },
      factories: {
        bwrap: fails('bwrap is installed but cannot run here: bwrap: setting up uid map: Permission denied'),
        docker: fails('docker not installed'),
        podman: fails('podman not installed'),
      },
    });
    expect(choice.warning).toContain('sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0');
    expect(choice.warning).toContain('profile bwrap /usr/bin/bwrap flags=(unconfined)');
    expect(choice.warning).toContain('/etc/apparmor.d/bwrap');
  });

  it('uses seatbelt on macOS', async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'darwin',
      factories: { seatbelt: works('seatbelt', 'sandbox-exec') },
    });
    expect(choice.reason).toBe('seatbelt: sandbox-exec works');
  });

  it('turns unexpected failures into reasons rather than crashes', async () => {
    const choice = await createSandbox('auto', opts(), {
      platform: 'win32',
      factories: {
        docker: async () => {
          throw new Error('EACCES');
        },
        podman: fails('podman not installed'),
      },
    });
    expect(choice.reason).toBe('none: docker: could not be set up (EACCES); podman not installed');
  });
});

describe('explicit modes', () => {
  it('returns the backend asked for, or its SandboxError', async () => {
    const ok = await createSandbox('podman', opts(), {
      factories: { podman: works('podman', 'podman 4.3.1') },
    });
    expect(ok.reason).toBe('podman: requested (podman 4.3.1)');
    await expect(
      createSandbox('bwrap', opts(), { factories: { bwrap: fails('bwrap not installed') } }),
    ).rejects.toThrow('bwrap not installed');
  });

  it('reports seatbelt as unavailable off macOS', async () => {
    if (process.platform === 'darwin') return;
    await expect(createSandbox('seatbelt', opts())).rejects.toThrow(/macOS only/);
  });
});

describe('on this machine', () => {
  it('auto picks bwrap when bwrap works here, and says so', async () => {
    const unavailable = await bwrapUnavailable();
    const choice = await createSandbox('auto', opts());
    if (process.platform === 'linux' && unavailable === null) {
      expect(choice.sandbox.kind).toBe('bwrap');
      expect(choice.reason).toMatch(/^bwrap: bubblewrap [\d.]+ works$/);
    } else {
      expect(choice.reason).toContain(unavailable ?? '');
    }
    await choice.sandbox.dispose();
  });
});

describe('runaway limits this machine cannot enforce', () => {
  it('are said in the warning given before the first command', async () => {
    const unlimited: SandboxFactory = async () => ({
      ...(await works('bwrap', 'bubblewrap 0.8.0')(opts())),
      safeguards: [
        { name: 'processes', active: false, detail: '512 wanted, not enforced: Hearth runs as root' },
        { name: 'temp space', active: false, detail: 'not a runaway limit' },
      ],
    });
    const choice = await createSandbox('bwrap', opts(), { factories: { bwrap: unlimited } });
    expect(choice.warning).toBe(
      'Not enforced here: processes limit (512 wanted, not enforced: Hearth runs as root). `hearth doctor` lists every limit.',
    );
    const held = await createSandbox('bwrap', opts(), { factories: { bwrap: works('bwrap', 'b') } });
    expect(held.warning).toBeUndefined();
    expect(held.sandbox.safeguards.map((g) => g.name)).toEqual(['disk writes']);
  });
});
