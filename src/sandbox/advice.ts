import { readFile } from 'node:fs/promises';

/**
 * What to do, on this very system, to get a working sandbox: the install command of its package
 * manager when bubblewrap is missing, or the setting that keeps user namespaces from working.
 * Shown in the no-sandbox warning and by `doctor`.
 */

export interface SystemFacts {
  platform: NodeJS.Platform;
  /** ID and ID_LIKE from /etc/os-release, lower-case. */
  distro: string[];
  /** Contents of the sysctls that can forbid unprivileged user namespaces, when present. */
  apparmorRestrictsUserns?: string;
  unprivilegedUsernsClone?: string;
  maxUserNamespaces?: string;
}

const read = (file: string) =>
  readFile(file, 'utf8').then(
    (t) => t.trim(),
    () => undefined,
  );

export async function systemFacts(): Promise<SystemFacts> {
  const osRelease = (await read('/etc/os-release')) ?? '';
  const field = (name: string) =>
    new RegExp(`^${name}=["']?([^"'\\n]*)`, 'm').exec(osRelease)?.[1]?.toLowerCase().split(/\s+/) ?? [];
  return {
    platform: process.platform,
    distro: [...field('ID'), ...field('ID_LIKE')],
    apparmorRestrictsUserns: await read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    unprivilegedUsernsClone: await read('/proc/sys/kernel/unprivileged_userns_clone'),
    maxUserNamespaces: await read('/proc/sys/user/max_user_namespaces'),
  };
}

const INSTALL: Array<[string, string]> = [
  ['debian', 'sudo apt install bubblewrap'],
  ['ubuntu', 'sudo apt install bubblewrap'],
  ['fedora', 'sudo dnf install bubblewrap'],
  ['rhel', 'sudo dnf install bubblewrap'],
  ['arch', 'sudo pacman -S bubblewrap'],
  ['suse', 'sudo zypper install bubblewrap'],
  ['alpine', 'sudo apk add bubblewrap'],
];

const APPARMOR_PROFILE =
  'abi <abi/4.0>,\ninclude <tunables/global>\nprofile bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n}';

/**
 * How to enable the sandbox here, given why each backend failed (`failures`, as select.ts gathered
 * them). One or more sentences, each ending with the command to run.
 */
export function enableSandboxAdvice(failures: string[], facts: SystemFacts): string {
  if (facts.platform === 'darwin') {
    return 'macOS has Seatbelt built in (/usr/bin/sandbox-exec); if it failed, docker or podman also work.';
  }
  if (facts.platform !== 'linux') return 'Install docker or podman and start it.';
  const text = failures.join(' ');
  if (/bwrap not installed/.test(text)) {
    const install = INSTALL.find(([id]) => facts.distro.includes(id))?.[1];
    return `Install bubblewrap: ${install ?? 'the "bubblewrap" package of your distribution (apt, dnf, pacman, zypper, apk)'}.`;
  }
  if (facts.apparmorRestrictsUserns === '1') {
    return (
      'AppArmor forbids unprivileged user namespaces here (Ubuntu 23.10 and later), which bubblewrap needs. ' +
      'Either give bwrap an AppArmor profile: write\n' +
      `${APPARMOR_PROFILE}\n` +
      'to /etc/apparmor.d/bwrap and run `sudo systemctl reload apparmor`; or allow them for every program: ' +
      '`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (add that line to /etc/sysctl.d/60-userns.conf ' +
      'to keep it after a reboot).'
    );
  }
  if (facts.unprivilegedUsernsClone === '0') {
    return 'User namespaces are switched off: `sudo sysctl kernel.unprivileged_userns_clone=1` (and in /etc/sysctl.d/ to keep it).';
  }
  if (facts.maxUserNamespaces === '0') {
    return 'User namespaces are switched off: `sudo sysctl user.max_user_namespaces=15000` (and in /etc/sysctl.d/ to keep it).';
  }
  if (/cannot run here/.test(text)) {
    return (
      'bubblewrap is installed but cannot create namespaces (inside a container, start it with ' +
      '--security-opt seccomp=unconfined --security-opt apparmor=unconfined, or use sandbox: "docker" from the host).'
    );
  }
  return 'Install bubblewrap (the "bubblewrap" package), or docker or podman.';
}
