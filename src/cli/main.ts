#!/usr/bin/env node
import { version } from './version.js';

/**
 * The entry stays tiny: `hearth --version` answers before anything else loads, and the rest of the
 * program (commander, config, the agent) comes in by dynamic import only for the runs that need it.
 */
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  process.stdout.write(`${version}\n`);
} else {
  import('./program.js')
    .then(({ runProgram }) => runProgram(process.argv))
    .catch((err: unknown) => {
      process.stderr.write(
        `hearth: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    });
}
