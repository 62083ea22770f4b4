import type { Command } from 'commander';
import { hearthHome } from '../../config/load.js';
import {
  listLocalModels,
  modelsDir,
  pullTarget,
  RECOMMENDED_MODELS,
  recordPull,
  removeLocalModel,
} from '../../llm/embedded/model-dir.js';
import { type PullProgress, pullModel } from '../../llm/embedded/model-pull.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';

const dir = () => modelsDir(hearthHome(process.env));
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function recommendedList(): string {
  return RECOMMENDED_MODELS.map((m) => `  ${m.name.padEnd(24)}${m.about}`).join('\n');
}

/** Progress on stderr: one updating line at a terminal, a line per tenth otherwise (logs, CI). */
function progressPrinter(label: string): { update(p: PullProgress): void; end(): void } {
  const tty = process.stderr.isTTY === true;
  let lastTenth = -1;
  let lastDraw = 0;
  const line = (p: PullProgress) =>
    `${label}: ${mb(p.received)}${p.total ? ` of ${mb(p.total)} (${Math.floor((p.received / p.total) * 100)}%)` : ''}${p.resumedFrom ? `, resumed at ${mb(p.resumedFrom)}` : ''}`;
  return {
    update(p) {
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 100 && p.received !== p.total) return;
        lastDraw = now;
        process.stderr.write(`\r\x1b[2K${line(p)}`);
        return;
      }
      const tenth = p.total ? Math.floor((p.received / p.total) * 10) : -1;
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        process.stderr.write(`${line(p)}\n`);
      }
    },
    end() {
      if (tty) process.stderr.write('\n');
    },
  };
}

/** `hearth models pull NAME|URL`. Ctrl+C stops it; the same pull later resumes. */
export async function pull(
  nameOrUrl: string | undefined,
  opts: { sha256?: string; list?: boolean },
  _cmd: Command,
): Promise<void> {
  if (opts.list || !nameOrUrl) {
    process.stdout.write(`Recommended models (hearth models pull NAME):\n${recommendedList()}\n`);
    return;
  }
  if (opts.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(opts.sha256))
    throw new UsageError('--sha256 expects 64 hexadecimal digits.');
  const target = pullTarget(nameOrUrl);
  if ('error' in target) throw new UsageError(target.error);
  const folder = dir();
  const progress = progressPrinter(`Pulling ${visible(target.file)}`);
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  const result = await pullModel(
    folder,
    { url: target.url, file: target.file, ...(opts.sha256 ? { sha256: opts.sha256 } : {}) },
    { onProgress: progress.update, signal: abort.signal },
  ).finally(() => {
    process.off('SIGINT', stop);
    progress.end();
  });
  if (!result.ok) throw new UsageError(visible(result.error));
  await recordPull(folder, target.file, {
    url: target.url,
    sha256: result.sha256,
    verified: result.verified,
    pulledAt: new Date().toISOString(),
  });
  const check =
    result.verified === 'none'
      ? `SHA-256 ${result.sha256} (nothing published to check it against)`
      : `SHA-256 ${result.sha256} verified`;
  process.stdout.write(
    `Saved ${visible(result.path)} (${mb(result.size)}), ${check}.\nRun it with: hearth --model ${visible(result.path)} "task"\n`,
  );
}

/** `hearth models list`. */
export async function listModels(_cmd: Command): Promise<void> {
  const folder = dir();
  const models = await listLocalModels(folder);
  if (models.length === 0) {
    process.stdout.write(
      `No models in ${visible(folder)}. Recommended (hearth models pull NAME):\n${recommendedList()}\n`,
    );
    return;
  }
  const lines = models.map((m) =>
    m.partial
      ? `${m.file}  ${mb(m.size)} so far (interrupted; pull it again to resume)`
      : `${m.file}  ${mb(m.size)}${m.source ? `  sha256 ${m.source.sha256}${m.source.verified === 'none' ? ' (unverified)' : ''}  from ${m.source.url}` : ''}`,
  );
  process.stdout.write(`${visible(folder)}\n${visible(lines.join('\n'))}\n`);
}

/** `hearth models rm NAME`. */
export async function removeModel(name: string, _cmd: Command): Promise<void> {
  const removed = await removeLocalModel(dir(), name);
  if ('error' in removed) throw new UsageError(visible(removed.error));
  process.stdout.write(`Removed ${visible(removed.join(', '))}.\n`);
}
