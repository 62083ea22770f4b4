import type { Dirent, Stats } from 'node:fs';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

/** A top-level system location as it exists on the host. */
export interface SystemEntry {
  path: string;
  /** Set when the entry is a symlink (merged /usr: /bin -> usr/bin), recreated as such inside. */
  symlinkTo?: string;
}

/** A path under /etc to hide: files become empty, directories become empty and read-only. */
export interface Mask {
  path: string;
  dir: boolean;
}

/**
 * What a Linux sandbox sees of the host's system: programs, libraries and configuration, read-only.
 * Deliberately absent: /home, /root, /mnt, /media, /srv, /var, /run, /sys.
 */
const SYSTEM_ROOTS: readonly string[] = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/opt',
  '/nix',
  '/etc',
];

/**
 * Hidden even when world-readable on some system: password hashes, sudo rules, private keys.
 * Anything else under /etc that is not world-readable is hidden too (see etcMasks).
 */
const ETC_SECRETS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/security/opasswd',
  '/etc/krb5.keytab',
];

const MAX_ETC_ENTRIES = 20_000;

export async function systemEntries(roots: readonly string[] = SYSTEM_ROOTS): Promise<SystemEntry[]> {
  const entries: SystemEntry[] = [];
  for (const root of roots) {
    let st: Stats;
    try {
      st = await lstat(root);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) entries.push({ path: root, symlinkTo: await readlink(root) });
    else if (st.isDirectory()) entries.push({ path: root });
  }
  return entries;
}

/**
 * The /etc entries a sandboxed command must not read. The sandbox may run as root (uid 0 keeps owning
 * root's files inside a user namespace), so file modes alone do not keep /etc/shadow private:
 * everything another user could not read is masked, plus the known secrets whatever their mode.
 */
export async function etcMasks(root = '/etc'): Promise<Mask[]> {
  const masks = new Map<string, Mask>();
  let seen = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++seen > MAX_ETC_ENTRIES) return;
      const p = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      let st: Stats;
      try {
        st = await lstat(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if ((st.mode & 0o005) !== 0o005) masks.set(p, { path: p, dir: true });
        else await walk(p);
      } else if (st.isFile() && (st.mode & 0o004) === 0) {
        masks.set(p, { path: p, dir: false });
      }
    }
  };
  await walk(root);

  const known =
    root === '/etc' ? ETC_SECRETS : ETC_SECRETS.map((s) => path.join(root, s.slice('/etc/'.length)));
  for (const p of known) {
    try {
      const st = await lstat(p);
      if (!st.isSymbolicLink()) masks.set(p, { path: p, dir: st.isDirectory() });
    } catch {
      // Not on this system.
    }
  }
  // A directory mask already hides what is inside it.
  const dirs = [...masks.values()].filter((m) => m.dir).map((m) => m.path);
  return [...masks.values()]
    .filter((m) => !dirs.some((d) => m.path !== d && m.path.startsWith(`${d}/`)))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Where /etc/resolv.conf really lives when that is outside /etc (systemd-resolved keeps it in /run),
 * so that DNS works when the network is on.
 */
export async function resolvConfTarget(): Promise<string | null> {
  try {
    const real = await realpath('/etc/resolv.conf');
    return real.startsWith('/etc/') ? null : real;
  } catch {
    return null;
  }
}
