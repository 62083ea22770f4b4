import type { Command } from 'commander';
import type { GlobalFlags } from '../options.js';
import { visible } from '../sanitize.js';

export function addDebugCommands(program: Command): void {
  const debug = program
    .command('debug')
    .description('inspect what Hearth sends to the model')
    .action(() => debug.outputHelp());
  debug
    .command('prompt')
    .description('size of the system prompt and each tool schema (characters and estimated tokens)')
    .option('--json', 'print the figures as JSON')
    .option('--show', 'also print the system prompt itself')
    .action(async (_opts: unknown, cmd: Command) => {
      // --json is also a main-command flag, so it lands among the global options.
      const opts = cmd.optsWithGlobals<GlobalFlags & { json?: boolean; show?: boolean }>();
      const [{ runtimeFromFlags }, { formatPromptSize, measurePrompt }] = await Promise.all([
        import('../options.js'),
        import('../../agent/prompt-size.js'),
      ]);
      const runtime = await runtimeFromFlags(opts);
      const size = measurePrompt(runtime.systemPrompt, runtime.tools);
      if (opts.json) process.stdout.write(`${JSON.stringify(size, null, 2)}\n`);
      else {
        if (opts.show) process.stdout.write(`${visible(runtime.systemPrompt)}\n\n`);
        process.stdout.write(`${formatPromptSize(size)}\n`);
      }
      await runtime.close();
    });
}
