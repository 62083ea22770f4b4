/**
 * `hearth worker` processes for cluster tests: what each printed on both streams is kept, so a
 * worker that never starts fails the test with its own words rather than a bare time-out.
 */
import { type CliRun, startCli } from './cli.js';
import { waitUntil } from './wait.js';

export interface WorkerProcess extends CliRun {
  output(): string;
  errors(): string;
  /** The worker's id once it printed "worker ID takes tasks", else ''. */
  id(): string;
  /** Both streams and the exit code, for a failure message. */
  describe(): string;
}

export function startWorkerProcess(args: string[], opts: Parameters<typeof startCli>[1]): WorkerProcess {
  const run = startCli(['worker', ...args], opts);
  let out = '';
  let err = '';
  run.child.stdout!.on('data', (d) => {
    out += d;
  });
  run.child.stderr!.on('data', (d) => {
    err += d;
  });
  return {
    ...run,
    output: () => out,
    errors: () => err,
    id: () => /worker (\S+) takes tasks/.exec(out)?.[1] ?? '',
    describe: () =>
      `pid ${run.child.pid}, exit ${run.child.exitCode ?? 'none yet'}\nstdout:\n${out}\nstderr:\n${err}`,
  };
}

/** Waits until every worker takes tasks; fails at once, with its output, when one exits instead. */
export async function untilWorkersStart(workers: readonly WorkerProcess[], ms: number): Promise<void> {
  try {
    await waitUntil(
      () => {
        const gone = workers.find((w) => w.id() === '' && w.child.exitCode !== null);
        if (gone) throw new Error(`a worker exited before it took tasks:\n${gone.describe()}`);
        return workers.every((w) => w.id() !== '');
      },
      'every worker to take tasks',
      ms,
    );
  } catch (err) {
    const all = workers.map((w, i) => `worker ${i + 1}: ${w.describe()}`).join('\n');
    throw new Error(`${(err as Error).message}\n${all}`);
  }
}

/** The URL a `hearth serve` process listens on, once its banner is out; rejects when it exits first. */
export function untilServing(run: CliRun): Promise<string> {
  let out = '';
  return new Promise<string>((resolve, reject) => {
    run.child.stdout!.on('data', (d) => {
      out += d;
      const found = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (found && out.includes('Ctrl+C')) resolve(found[1]!);
    });
    run.result.then((r) => reject(new Error(`serve exited ${r.code}: ${r.stderr}`)));
  });
}
