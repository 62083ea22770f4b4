import { describe, expect, it } from 'vitest';
import { buildSeatbeltProfile, type SeatbeltPlan, seatbeltProtected } from '../../src/sandbox/seatbelt.js';

const WS = '/Users/alice/proj';

const plan = (over: Partial<SeatbeltPlan> = {}): SeatbeltPlan => ({
  workspace: WS,
  scratch: '/private/var/folders/xy/T/hearth-seatbelt-1',
  hidden: ['/Users', '/Volumes', '/Users/alice'],
  writable: ['/private/tmp', '/private/var/folders/xy/T'],
  extraReadOnly: ['/Users/alice/.nvm'],
  pinned: [`${WS}/.git`],
  protected: seatbeltProtected(WS, { pinned: [`${WS}/.git`], readOnly: [`${WS}/tools/hooks`] }),
  network: false,
  ...over,
});

/** The lines of a profile that start with the given rule head, e.g. "(allow file-write*". */
function rules(profile: string, head: string): string[] {
  return profile.split('\n').filter((l) => l.startsWith(head));
}

function balanced(profile: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < profile.length; i++) {
    const c = profile[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0 && !inString;
}

describe('buildSeatbeltProfile', () => {
  it('denies by default and is well formed', () => {
    const profile = buildSeatbeltProfile(plan());
    expect(profile.startsWith('(version 1)\n(deny default)\n')).toBe(true);
    expect(balanced(profile)).toBe(true);
  });

  it('hides the homes, then lets the workspace and extra paths be read again', () => {
    const profile = buildSeatbeltProfile(plan());
    const lines = profile.split('\n');
    const deny = lines.findIndex((l) => l.startsWith('(deny file-read*'));
    const reallow = lines.findIndex((l) => l.startsWith('(allow file-read* (subpath'));
    expect(lines[deny]).toContain('(subpath "/Users/alice")');
    expect(lines[deny]).toContain('(subpath "/Users")');
    expect(lines[reallow]).toContain(`(subpath "${WS}")`);
    expect(lines[reallow]).toContain('(subpath "/Users/alice/.nvm")');
    expect(reallow).toBeGreaterThan(deny);
    expect(lines.indexOf('(allow file-read-metadata)')).toBeGreaterThan(deny);
  });

  it('allows writes to the workspace and temp dirs only, then denies the protected paths', () => {
    const profile = buildSeatbeltProfile(plan());
    const [allow] = rules(profile, '(allow file-write*');
    expect(allow).toContain(`(subpath "${WS}")`);
    expect(allow).toContain('(subpath "/private/tmp")');
    expect(allow).not.toContain('(subpath "/Users/alice")');
    const [deny] = rules(profile, '(deny file-write*');
    for (const p of ['.hearth', '.git/hooks', '.git/config', '.bashrc', '.zshrc', '.envrc', 'tools/hooks']) {
      expect(deny).toContain(`(subpath "${WS}/${p}")`);
    }
    expect(deny).toContain(`(literal "${WS}/.git")`);
    expect(profile.indexOf('(deny file-write*')).toBeGreaterThan(profile.indexOf('(allow file-write*'));
  });

  it('allows the network only when enabled', () => {
    expect(buildSeatbeltProfile(plan())).not.toMatch(/network/);
    expect(rules(buildSeatbeltProfile(plan({ network: true })), '(allow network*')).toHaveLength(1);
  });

  it('escapes quotes and backslashes in paths', () => {
    const profile = buildSeatbeltProfile(
      plan({ workspace: '/Users/a/we"ird\\dir', pinned: [], protected: [] }),
    );
    expect(profile).toContain('(subpath "/Users/a/we\\"ird\\\\dir")');
    expect(balanced(profile)).toBe(true);
  });
});
