import path from 'node:path';
import { modeDefault, type PermissionMode, planModeRefusal } from './modes.js';
import {
  escapeGlob,
  formatRule,
  isOutside,
  matchPath,
  matchText,
  matchTextPrefix,
  namesTool,
  type Rule,
} from './rules.js';
import { isSecretPath } from './secrets.js';
import { collapseWhitespace } from './shell-words.js';
import { type CallSubject, type CallSubjects, subjectsOf, urlHost } from './subjects.js';

export type { CallSubject } from './subjects.js';
export { callSubject, describeCall } from './subjects.js';

export interface Policy {
  mode: PermissionMode;
  allow: readonly Rule[];
  deny: readonly Rule[];
}

export type Verdict =
  /** `rule`: the allow rule(s) that covered the call, when a rule rather than the mode let it run. */
  | { action: 'allow'; rule?: string }
  /** `reason` is for the model: what happened, which rule, what to do instead. */
  | { action: 'deny'; reason: string; rule?: string }
  /**
   * `reason` is one line for the user: why this call needs their answer. `secret`: the call touches
   * files that may hold secrets, which no mode pre-approves; only an allow rule naming them does.
   * `personOnly`: neither a mode nor a rule pre-approves it, only a person's answer.
   */
  | { action: 'ask'; reason: string; secret?: true; personOnly?: true };

/**
 * Decides a validated call. In order: deny rules; plan mode refusing tools that change things; a
 * shell line a deny rule cannot see through (asks); allow rules; files that look like secrets (ask,
 * whatever the mode); the mode's default.
 *
 * Matching: a deny rule applies when any part of the call matches it (any path, or the file a
 * symlink leads to; any command a shell line runs: inside substitutions, behind wrappers such as
 * `sudo`, `env`, `xargs`, `find -exec`, in `bash -c '…'` and `eval`, see shell-view.ts). A shell
 * line with something no deny rule can see through (`$x` as the command, `python3 -c`, `eval`,
 * a nested shell) is not run unasked while any patterned deny rule for the tool exists.
 *
 * An allow rule set covers a call only when every part is covered. A shell line with substitutions, file redirections or anything the splitter
 * could not follow is covered only by a bare `shell` (or `*`) rule. A secret-looking path is covered
 * only by a rule whose pattern matches it: a bare tool name does not pre-approve secrets. A path
 * outside the workspace is covered only by a pattern that is itself absolute or starts with `../`.
 */
export function decide(call: CallSubject, policy: Policy): Verdict {
  const subjects = subjectsOf(call);

  const denied = policy.deny.find((rule) => denies(rule, call.tool, subjects));
  if (denied) {
    return {
      action: 'deny',
      reason: `${call.tool} was denied by the rule "${denied.text}". Choose another way, or ask the user.`,
      rule: denied.text,
    };
  }

  if (policy.mode === 'plan' && call.mutates) return { action: 'deny', reason: planModeRefusal(call.tool) };

  const hidden = subjects.view?.hidden ?? [];
  if (
    hidden.length > 0 &&
    policy.deny.some((rule) => namesTool(rule.tool, call.tool) && rule.pattern !== undefined)
  ) {
    return {
      action: 'ask',
      reason: `a deny rule for ${call.tool} cannot see through ${hidden.join(', ')}, so this line may run what it forbids (allow rules and "always" answers do not cover it)`,
      personOnly: true,
    };
  }

  const cover = coverage(policy.allow, call.tool, subjects);
  if (cover.covered) return { action: 'allow', rule: cover.rules.join(', ') };

  // A secret an allow rule named is pre-approved even when the rest of the call still needs the mode's say.
  const secrets = subjects.secrets.filter((item) => cover.uncovered.includes(item));
  if (secrets.length > 0) {
    return {
      action: 'ask',
      reason: `${call.tool} would touch ${secrets.join(', ')}, which may hold secrets; an allow rule naming it skips this question`,
      secret: true,
    };
  }

  const fallback = modeDefault(policy.mode, call.tool, call.mutates, subjects.kind === 'command');
  if (fallback.action === 'ask' && cover.why)
    return { action: 'ask', reason: `${fallback.reason} (${cover.why})` };
  return fallback;
}

function targets(rule: Rule, tool: string, subjects: CallSubjects): boolean {
  if (namesTool(rule.tool, tool)) return true;
  // `*(PATTERN)` is about files; applied to a command line or a commit message it would mean nothing.
  return rule.tool === '*' && (rule.pattern === undefined || subjects.kind === 'path');
}

function denies(rule: Rule, tool: string, subjects: CallSubjects): boolean {
  if (!targets(rule, tool, subjects)) return false;
  const pattern = rule.pattern;
  if (pattern === undefined) return true;
  switch (subjects.kind) {
    case 'command': {
      const split = subjects.shell!;
      const view = subjects.view!;
      const wanted = collapseWhitespace(pattern);
      const forms = [
        // The whole line, so that a rule written across an operator (`curl *| sh`) still bites.
        subjects.items[0] ?? '',
        // Each simple command as written, so a rule may name quoting or a wrapper (`sudo *`).
        ...[...split.commands, ...split.nested].map((command) => command.text),
        ...view.commands.map((command) => command.words.join(' ')),
      ];
      if (forms.some((form) => matchText(wanted, collapseWhitespace(form)))) return true;
      // `xargs rm`, `find -exec rm {} +`: arguments follow that the line does not show.
      return view.commands.some(
        (command) =>
          command.open && matchTextPrefix(wanted, `${collapseWhitespace(command.words.join(' '))} `),
      );
    }
    case 'path':
      return subjects.items.some((item) => matchPath(pattern, item));
    case 'url':
      return subjects.items.some((item) => matchUrl(pattern, item));
    case 'text':
      return subjects.items.some((item) => matchText(pattern, item));
  }
}

/** A URL rule names a host (`docs.python.org`, `*.github.com`) or a whole URL with wildcards. */
function matchUrl(pattern: string, url: string): boolean {
  return matchText(pattern, urlHost(url)) || matchText(pattern, url);
}

interface Coverage {
  covered: boolean;
  /** The rules that covered the call, or the parts of it that were covered. */
  rules: string[];
  /** The path or text items no allow rule covered. */
  uncovered: string[];
  /** Why allow rules could not cover it, when that is worth telling the user. */
  why?: string;
}

function coverage(allow: readonly Rule[], tool: string, subjects: CallSubjects): Coverage {
  const rules = allow.filter((rule) => targets(rule, tool, subjects));
  const bare = rules.find((rule) => rule.pattern === undefined);
  const patterned = rules.filter((rule): rule is Rule & { pattern: string } => rule.pattern !== undefined);
  const used = new Set<string>();
  const coveredBy = (find: (rule: Rule & { pattern: string }) => boolean): boolean => {
    const rule = patterned.find(find);
    if (rule) used.add(rule.text);
    return rule !== undefined;
  };
  const none: Coverage = { covered: false, rules: [], uncovered: subjects.items };

  if (subjects.kind === 'command') {
    if (bare) return { covered: true, rules: [bare.text], uncovered: [] };
    const split = subjects.shell!;
    if (split.unsafe) return { ...none, why: `no allow rule can cover it: ${split.unsafe}` };
    if (split.commands.length === 0) return none;
    const all = split.commands.every((command) => {
      const text = collapseWhitespace(command.text);
      return coveredBy((rule) => matchText(collapseWhitespace(rule.pattern), text));
    });
    return all ? { covered: true, rules: [...used], uncovered: [] } : none;
  }

  if (subjects.items.length === 0) return bare ? { covered: true, rules: [bare.text], uncovered: [] } : none;
  const uncovered = subjects.items.filter((item) => {
    if (subjects.kind === 'text')
      return !(coveredBy((rule) => matchText(rule.pattern, item)) || useBare(bare, used));
    if (subjects.kind === 'url')
      return !(coveredBy((rule) => matchUrl(rule.pattern, item)) || useBare(bare, used));
    const byPattern = coveredBy((rule) => patternCovers(rule.pattern, item));
    return !(byPattern || (!subjects.secrets.includes(item) && useBare(bare, used)));
  });
  return { covered: uncovered.length === 0, rules: [...used], uncovered };
}

/** An allow pattern covers a path it matches; a path outside the workspace only when the pattern is outside too. */
function patternCovers(pattern: string, item: string): boolean {
  if (isOutside(item) && !isOutside(pattern.trim())) return false;
  return matchPath(pattern, item);
}

/**
 * For tools that read many files in one call (a search): whether a file met along the way must be
 * left out because it looks like a secret and no allow rule for the tool names it, as a bare tool
 * name does not. `file` is normalised (workspace-relative); `real` is where it leads when it is a
 * symlink: either looking like a secret counts, and a rule must then name the secret one.
 */
export function leavesOutSecret(allow: readonly Rule[], tool: string, file: string, real?: string): boolean {
  const secrets = [file, ...(real === undefined || real === file ? [] : [real])].filter(isSecretPath);
  if (secrets.length === 0) return false;
  const named = (item: string) =>
    allow.some(
      (rule) =>
        (namesTool(rule.tool, tool) || rule.tool === '*') &&
        rule.pattern !== undefined &&
        patternCovers(rule.pattern, item),
    );
  return !secrets.every(named);
}

function useBare(bare: Rule | undefined, used: Set<string>): boolean {
  if (bare) used.add(bare.text);
  return bare !== undefined;
}

// A subcommand is a plain word (`test`, `commit`, `compose`); a file name, flag or glob is not.
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_-]*$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Rules that would let exactly this call run without asking: each path named as it is, or the "always" rules. */
export function exactRules(call: CallSubject): string[] {
  const subjects = subjectsOf(call);
  if (subjects.kind !== 'path') return alwaysRules(call).map((rule) => rule.text);
  return subjects.items.map((item) => formatRule(call.tool, escapeGlob(item)).text);
}

/**
 * The rules an "always" answer adds for this session, covering calls like this one: for the shell,
 * one rule per simple command, its program and subcommand followed by `*` (`npm test --watch` →
 * `shell(npm test*)`, `ls -la src` → `shell(ls*)`); for calls that touch files, one rule per path,
 * the file's directory (`src/a/b.ts` → `write_file(src/a/**)`), or the exact file when it sits at
 * the root or looks like a secret; for URLs, the host; for any other call, the bare tool name.
 *
 * A shell line that no pattern can cover (substitutions, file redirections) still yields rules for
 * its commands, but those will not let this very line run without asking next time.
 */
export function alwaysRules(call: CallSubject): Rule[] {
  const subjects = subjectsOf(call);
  const patterns = new Set<string>();
  if (subjects.kind === 'command') {
    for (const command of subjects.shell!.commands) {
      const words = command.words.map((w) => w.raw);
      // Leading assignments (`CI=1 npm test`) stay in the prefix: they change what the program does.
      let at = 0;
      while (at < words.length - 1 && ASSIGNMENT.test(words[at]!)) at++;
      const second = words[at + 1];
      const end = second !== undefined && SUBCOMMAND.test(second) ? at + 2 : at + 1;
      patterns.add(`${words.slice(0, end).join(' ')}*`);
    }
  } else if (subjects.kind === 'path') {
    for (const item of subjects.items) {
      const dir = path.posix.dirname(item);
      const exact = dir === '.' || dir === '/' || dir === item || subjects.secrets.includes(item);
      patterns.add(exact ? escapeGlob(item) : `${escapeGlob(dir)}/**`);
    }
  } else if (subjects.kind === 'url') {
    for (const item of subjects.items) patterns.add(urlHost(item));
  }
  if (patterns.size === 0) return [formatRule(call.tool)];
  return [...patterns].map((pattern) => formatRule(call.tool, pattern));
}
