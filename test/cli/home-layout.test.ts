import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliHarness } from '../support/cli-harness.js';
import { reply } from '../support/scripted-server.js';

const cli = useCliHarness('home-layout');

describe('a Hearth home inside the workspace', () => {
  it('is refused before anything runs: sandboxed commands could write what runs on the host', async () => {
    await cli.serve([reply().text('Should not be asked.')]);
    const home = join(cli.workspace, 'tools', 'hearth');
    const r = await cli.run(['hello'], { env: { HEARTH_HOME: home } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`The Hearth home ${home} lies inside the workspace ${cli.workspace}`);
    expect(r.stderr).toContain('HEARTH_HOME');
    expect(cli.server.requests).toHaveLength(0);
    expect(existsSync(join(home, 'hearth.db'))).toBe(false);
  });

  it('is refused for a database the user placed inside the workspace', async () => {
    await cli.serve([reply().text('Should not be asked.')]);
    const db = join(cli.workspace, 'data', 'hearth.db');
    const r = await cli.run(['hello'], { env: { HEARTH_DB: db } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`The database ${db} lies inside the workspace`);
    expect(cli.server.requests).toHaveLength(0);
  });

  it("is allowed as the workspace's own .hearth, which the sandbox protects (hearth run in ~)", async () => {
    await cli.serve([reply().text('Hello from home.')]);
    const r = await cli.run(['hello'], { env: { HOME: cli.workspace, HEARTH_HOME: undefined } });
    expect(r.stderr).not.toContain('lies inside the workspace');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Hello from home.\n');
    expect(existsSync(join(cli.workspace, '.hearth', 'hearth.db'))).toBe(true);
  });
});
