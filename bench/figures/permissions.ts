import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionGate } from '../../src/permissions/gate.js';
import { parseRule } from '../../src/permissions/rules.js';
import { readFileTool } from '../../src/tools/fs/read-file.js';
import { shellTool } from '../../src/tools/shell.js';
import { MemoryState } from '../../src/tools/types.js';
import { type Row, spread, timeRuns } from '../stats.js';

const CALLS = 2000;
const ROUNDS = 7;
/** Issue 13's budget for all of Hearth's own work in one step. */
const STEP_BUDGET_MS = 2;

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;

/**
 * The permission check of one call, on the hot path of every step: a shell line against deny and
 * allow rules (splitting, unwrapping, matching), and a file read whose path is resolved through
 * symlinks first. Each round times CALLS fresh calls; the figure is the time per call. The
 * baseline for the file read is a bare `realpath` of the same path, the floor for that resolution.
 */
export async function permissionFigures(): Promise<{ rows: Row[]; json: Record<string, unknown> }> {
  const ws = await realpath(await mkdtemp(join(tmpdir(), 'hearth-bench-perm-')));
  try {
    await mkdir(join(ws, 'src', 'lib'), { recursive: true });
    await writeFile(join(ws, 'src', 'lib', 'a.ts'), 'x\n');
    await symlink('src/lib/a.ts', join(ws, 'alias.ts'));
    const deny = ['shell(rm *)', 'shell(git push*)', 'shell(curl *)', 'read_file(secrets/**)', '*(.env)'];
    const allow = ['shell(npm test*)', 'shell(git status*)', 'read_file(src/**)'];
    const gate = new PermissionGate('normal', { allow: allow.map(parseRule), deny: deny.map(parseRule) }, ws);
    const state = new MemoryState();
    const line = 'sudo timeout 60 npm test -- --watch && git status --short | grep -v x';

    const perCall = async (make: () => Promise<unknown>) =>
      spread(
        (
          await timeRuns(ROUNDS, async () => {
            for (let i = 0; i < CALLS; i++) await make();
          })
        ).map((t) => t / CALLS),
      );

    const shell = await perCall(() => gate.check(shellTool, { command: line }, state));
    const read = await perCall(() => gate.check(readFileTool, { path: 'alias.ts' }, state));
    const floor = await perCall(() => realpath(join(ws, 'alias.ts')));
    return {
      rows: [
        {
          figure: 'permission check: shell line, 8 rules',
          value: `${us(shell.median)} per call (${us(shell.min)}–${us(shell.max)})`,
          baseline: `step budget ${STEP_BUDGET_MS} ms`,
          ratio: `${((shell.median / STEP_BUDGET_MS) * 100).toFixed(2)}%`,
        },
        {
          figure: 'permission check: read_file through a symlink',
          value: `${us(read.median)} per call (${us(read.min)}–${us(read.max)})`,
          baseline: `realpath alone ${us(floor.median)}`,
          ratio: `${(read.median / floor.median).toFixed(2)}×`,
        },
      ],
      json: { permissionShellMs: shell.median, permissionReadMs: read.median, realpathMs: floor.median },
    };
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
}
