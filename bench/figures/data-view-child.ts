/**
 * Run in a child process by data-view.ts, so that its peak RSS is the tool's alone:
 * `node --import tsx data-view-child.ts FILE [--idle]` prints {"ms": …, "maxRssKb": …}.
 * With --idle it loads the tool and does not run it: the baseline memory of a process like it.
 */
import { basename, dirname } from 'node:path';
import { dataViewTool } from '../../src/tools/data/data-view.js';
import { makeToolContext } from '../../test/support/tool-context.js';

const [file, flag] = process.argv.slice(2);
if (!file) throw new Error('usage: data-view-child.ts FILE [--idle]');
const started = performance.now();
if (flag !== '--idle') {
  await dataViewTool.run({ path: basename(file) }, makeToolContext(dirname(file)));
}
process.stdout.write(
  JSON.stringify({ ms: performance.now() - started, maxRssKb: process.resourceUsage().maxRSS }),
);
