#!/usr/bin/env node
import { runProgram } from './program.js';

runProgram(process.argv).catch((err: unknown) => {
  process.stderr.write(
    `hearth: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exitCode = 1;
});
