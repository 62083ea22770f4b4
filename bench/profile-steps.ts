/**
 * Where a step's time goes, early and late in a session: runs the bench's 200-step session (the
 * built CLI, `figures/steps.ts`'s script) under `--cpu-prof` and prints, per step, the CPU time of
 * the functions that take the most in steps 2–10 (step 1 also sets up the sandbox) beside their time
 * in steps 191–200: self time (the function's own code and the builtins it calls) and total time
 * (with its callees). Samples every 100 µs, so a figure under about 0.02 ms a step is noise; the
 * profiler slows everything a little. Not part of `npm run bench`: a tool for finding the cost.
 *
 *   npm run build && node --import tsx bench/profile-steps.ts [--runs 3] [--top 40] [--sort late] [-- NODE_FLAG ...]
 */
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { STEPS, spawnSession, stepScript, warmUp, writeStepData } from './figures/steps.js';
import { startMockServer } from './mock-server.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds per function name, self and total, over the samples inside one window. */
interface Costs {
  self: Map<string, number>;
  total: Map<string, number>;
  busy: number;
}

const EARLY: [number, number] = [1, 10];
const LATE: [number, number] = [STEPS - 10, STEPS];

/** One profiled session; `starts` are the turn_start times, on the profile's clock. */
async function profiledRun(dir: string, index: number, nodeFlags: string[]): Promise<[Profile, number[]]> {
  const server = await startMockServer(dir, stepScript());
  await warmUp(server.baseUrl);
  const profDir = join(dir, `prof-${index}`);
  const starts: number[] = [];
  try {
    const profile = ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', profDir];
    const child = spawnSession(dir, index, server.baseUrl, [...profile, ...nodeFlags]);
    for await (const line of createInterface({ input: child.stdout })) {
      // V8 stamps samples in monotonic microseconds, the clock hrtime reads too.
      if (line.includes('"type":"turn_start"')) starts.push(Number(process.hrtime.bigint() / 1000n));
    }
    await new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null)));
  } finally {
    server.stop();
  }
  const file = (await readdir(profDir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the CLI wrote no profile');
  return [JSON.parse(await readFile(join(profDir, file), 'utf8')) as Profile, starts];
}

function label(node: ProfileNode): string {
  const url = node.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/');
  return `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`;
}

function addCosts(into: Costs, profile: Profile, from: number, to: number): void {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (t < from || t >= to) continue;
    let node = byId.get(profile.samples[i]!);
    const name = label(node!);
    if (name.startsWith('(idle)')) continue;
    into.busy += us;
    into.self.set(name, (into.self.get(name) ?? 0) + us);
    const seen = new Set<string>();
    for (; node; node = parent.get(node.id)) {
      const each = label(node);
      if (seen.has(each)) continue;
      seen.add(each);
      into.total.set(each, (into.total.get(each) ?? 0) + us);
    }
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      top: { type: 'string' },
      runs: { type: 'string' },
      focus: { type: 'string' },
      sort: { type: 'string' },
    },
    allowPositionals: true,
  });
  const top = Number(values.top ?? 40);
  const runs = Number(values.runs ?? 3);
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'hearth-prof-')));
  const fresh = (): Costs => ({ self: new Map(), total: new Map(), busy: 0 });
  const early = fresh();
  const late = fresh();
  let earlyWall = 0;
  let lateWall = 0;
  try {
    await writeStepData(dir);
    for (let i = 0; i < runs; i++) {
      const [profile, starts] = await profiledRun(dir, i, positionals);
      addCosts(early, profile, starts[EARLY[0]]!, starts[EARLY[1]]!);
      if (values.focus) {
        // The functions named like --focus, step by step: a cost paid once shows in one step only.
        const focus = new RegExp(values.focus);
        const each = Array.from({ length: 12 }, (_, step) => {
          const costs = fresh();
          addCosts(costs, profile, starts[step]!, starts[step + 1]!);
          const us = [...costs.total]
            .filter(([name]) => focus.test(name))
            .reduce((sum, [, v]) => Math.max(sum, v), 0);
          return (us / 1000).toFixed(2);
        });
        process.stdout.write(`run ${i + 1}, steps 1–12, ms in ${values.focus}: ${each.join(' ')}\n`);
      }
      addCosts(late, profile, starts[LATE[0]]!, starts[LATE[1]]!);
      earlyWall += starts[EARLY[1]]! - starts[EARLY[0]]!;
      lateWall += starts[LATE[1]]! - starts[LATE[0]]!;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const perStep = (us: number, [from, to]: [number, number]) => us / runs / (to - from) / 1000;
  const ms = (us: number | undefined, window: [number, number]) =>
    perStep(us ?? 0, window)
      .toFixed(3)
      .padStart(7);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(`ms a step, over ${runs} runs: steps 2–10 | steps 191–200`);
  out(`wall (turn_start to turn_start) ${ms(earlyWall, EARLY)} | ${ms(lateWall, LATE)}`);
  out(`busy (sampled, not idle)        ${ms(early.busy, EARLY)} | ${ms(late.busy, LATE)}`);
  for (const kind of ['self', 'total'] as const) {
    out(`\n${kind} time`);
    // Sorted by steps 2–10, or by 191–200 with `--sort late` (the steady state, once V8 has optimised).
    const byLate = values.sort === 'late';
    const rows = [...(byLate ? late : early)[kind]].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [name] of rows) {
      out(`${ms(early[kind].get(name), EARLY)} | ${ms(late[kind].get(name), LATE)}  ${name}`);
    }
  }
}

await main();
