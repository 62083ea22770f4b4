import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { EditCheckPort, EditWatch } from '../agent/edit-check.js';
import { shown } from './checkers.js';
import { changedLines, describeCheck, describeProblem, goneCount, newErrors, stillThere } from './report.js';
import { inside } from './servers.js';
import type { LspService } from './service.js';
import type { Checker, CheckOutcome, Problem } from './types.js';

/**
 * One session's view of the diagnostics: what it last saw in each file it changed (the baseline
 * the next edit's errors are told apart from), the errors it said (to say when they are gone), and
 * checks that missed their deadline, said with a later result once in. The servers themselves are
 * the runtime's (service.ts), shared by its sessions.
 */

/** Files one call may have checked: a call writing more says nothing about the rest. */
const FILES_PER_CALL = 5;
/** Files a session's reads may warm in all: a session reading the whole tree opens a few. */
const WARM_FILES = 20;

interface FileState {
  /** The text last checked, and every problem found in it. */
  text: string;
  problems?: Problem[];
  /** Errors said to the model that were still there at the last check. */
  said: Problem[];
  /** Bumped by every check: a pending answer for an older one is not said. */
  generation: number;
}

interface Late {
  file: string;
  generation: number;
  outcome?: CheckOutcome;
  finish(outcome: CheckOutcome): string | undefined;
}

export class SessionDiagnostics implements EditCheckPort {
  private readonly files = new Map<string, FileState>();
  private readonly late: Late[] = [];
  private readonly warmed = new Set<string>();

  constructor(private readonly service: LspService) {}

  async before(writes: string[]): Promise<EditWatch> {
    const targets =
      writes.length > 0
        ? writes.map((path) => this.absolute(path)).filter((f): f is string => f !== undefined)
        : [...this.files.keys()];
    const watched = targets.filter((file) => this.service.handles(file)).slice(0, FILES_PER_CALL);
    const before = await Promise.all(watched.map(async (file) => ({ file, text: await readText(file) })));
    // A file first changed now: the server reads it as it is before the edit, for the baseline.
    const deadline = Date.now() + this.service.settings.timeoutMs;
    const baselines = new Map<string, Promise<CheckOutcome>>();
    for (const { file, text } of before) {
      const checker = this.files.has(file) || text === undefined ? undefined : this.service.checkerFor(file);
      if (checker && !checker.readsDisk) baselines.set(file, checker.check(file, text!, deadline));
    }
    return {
      after: async (ok) => {
        if (!ok && writes.length > 0) return undefined;
        const said = await Promise.all(
          before.map(({ file, text }) => this.afterEdit(file, text, baselines.get(file))),
        );
        return join(said);
      },
    };
  }

  warm(reads: string[]): void {
    const files = reads
      .map((path) => this.absolute(path))
      .filter((f): f is string => f !== undefined && !this.warmed.has(f) && !this.files.has(f))
      .slice(0, Math.min(FILES_PER_CALL, WARM_FILES - this.warmed.size));
    for (const file of files) {
      this.warmed.add(file);
      void readText(file).then((text) => {
        if (text !== undefined) this.service.warm(file, text);
      });
    }
  }

  carried(): string | undefined {
    const done = this.late.filter((late) => late.outcome !== undefined);
    if (done.length === 0) return undefined;
    for (const late of done) this.late.splice(this.late.indexOf(late), 1);
    return join(
      done
        .filter((late) => this.files.get(late.file)?.generation === late.generation)
        .map((late) => late.finish(late.outcome!)),
    );
  }

  /** The `diagnostics` tool: every error in a file now, or in each file this session changed. */
  async current(path: string | undefined): Promise<string> {
    const files = path === undefined ? [...this.files.keys()] : [this.absolute(path)];
    if (files.some((f) => f === undefined)) return `${path} is outside the workspace.`;
    if (files.length === 0)
      return 'No file was changed in this session yet: name one with `path` to check it.';
    const deadline = Date.now() + this.service.settings.timeoutMs;
    const parts = await Promise.all(
      (files as string[]).map(async (file) => {
        const name = shown(this.service.workspace, file);
        const text = await readText(file);
        const checker = this.service.checkerFor(file);
        if (text === undefined) return `${name}: no such file.`;
        if (!checker) return `${name}: no language server or checker for this kind of file is installed.`;
        const outcome = await checker.check(file, text, deadline);
        if (outcome.kind === 'pending')
          return `${name}: pending (${outcome.by} is still checking; ask again).`;
        if (outcome.kind === 'none') return `${name}: not checked (${outcome.reason ?? 'no checker'}).`;
        const errors = outcome.problems.filter((p) => p.severity === 'error');
        if (errors.length === 0) return `${name}: no errors (${outcome.by}).`;
        const { max } = this.service.settings;
        return [
          `${name}: ${errors.length} error${errors.length === 1 ? '' : 's'} (${outcome.by}):`,
          ...errors.slice(0, max).map(describeProblem),
          ...(errors.length > max ? [`  … and ${errors.length - max} more`] : []),
        ].join('\n');
      }),
    );
    return parts.join('\n');
  }

  private async afterEdit(
    file: string,
    old: string | undefined,
    baseline: Promise<CheckOutcome> | undefined,
  ): Promise<string | undefined> {
    const text = await readText(file);
    const state = this.files.get(file);
    const previous = state?.text ?? old;
    if (text === undefined || text === previous) return undefined;
    const checker = this.service.checkerFor(file);
    if (!checker) return undefined;
    const deadline = Date.now() + this.service.settings.timeoutMs;
    const known = state ? state.problems : problemsOf(await baseline);
    const generation = (state?.generation ?? 0) + 1;
    this.files.set(file, { text, problems: undefined, said: state?.said ?? [], generation });
    const finish = (outcome: CheckOutcome) => this.report(file, checker, outcome, previous, known);
    const outcome = await checker.check(file, text, deadline);
    if (outcome.kind !== 'pending') return finish(outcome);
    const late: Late = { file, generation, finish };
    this.late.push(late);
    void outcome.later.then((settled) => {
      late.outcome = settled;
    });
    return `[diagnostics] ${shown(this.service.workspace, file)}: pending (${outcome.by} is still checking; they come with a later tool result).`;
  }

  private report(
    file: string,
    checker: Checker,
    outcome: CheckOutcome,
    before: string | undefined,
    known: Problem[] | undefined,
  ): string | undefined {
    const name = shown(this.service.workspace, file);
    const state = this.files.get(file);
    if (outcome.kind === 'none')
      return outcome.reason ? `[diagnostics] ${name}: not checked (${outcome.reason}).` : undefined;
    if (outcome.kind === 'pending' || !state) return undefined;
    const errors = newErrors(outcome.problems, known, changedLines(before, state.text));
    const gone = goneCount(state.said, outcome.problems);
    state.problems = outcome.problems;
    state.said = [...stillThere(state.said, outcome.problems), ...errors];
    return describeCheck(name, checker.name, errors, gone, this.service.settings.max);
  }

  /** An absolute path inside the workspace, or undefined. */
  private absolute(path: string): string | undefined {
    const { workspace } = this.service;
    const file = isAbsolute(path) ? path : resolve(workspace, path);
    return inside(workspace, file) ? file : undefined;
  }
}

function problemsOf(outcome: CheckOutcome | undefined): Problem[] | undefined {
  return outcome?.kind === 'checked' ? outcome.problems : undefined;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

function join(parts: Array<string | undefined>): string | undefined {
  const said = parts.filter((p): p is string => p !== undefined);
  return said.length > 0 ? said.join('\n') : undefined;
}
