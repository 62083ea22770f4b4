import { z } from 'zod';
import { defineTool, type ToolContext, ToolError } from '../types.js';
import { type GitRunner, gitFailure } from './run-git.js';

const BRANCH_MAX_LISTED = 100;

export function createGitBranchTool(git: GitRunner) {
  return defineTool({
    name: 'git_branch',
    description: 'List branches (current marked *), create a branch at HEAD, or switch to a branch.',
    parameters: z.object({
      action: z.enum(['list', 'create', 'switch']),
      name: z.string().optional().describe('Branch name, required for create and switch'),
    }),
    mutates: true,
    // Rules match the branch name, or the action when there is none (`git_branch(list)`).
    touches: (args) => ({ text: args.name || args.action }),
    label: (args) => ['git_branch', args.action, args.name].filter(Boolean).join(' '),
    async run(args, ctx) {
      if (args.action === 'list') return listBranches(git, ctx);
      if (args.name === undefined || args.name.trim() === '') {
        throw new ToolError(
          `action=${args.action} needs a name, e.g. {"action":"${args.action}","name":"fix/login"}.`,
        );
      }
      const name = await checkBranchName(git, ctx, args.name);
      return args.action === 'create' ? createBranch(git, ctx, name) : switchBranch(git, ctx, name);
    },
  });
}

async function listBranches(git: GitRunner, ctx: ToolContext): Promise<string> {
  const r = await git.run(ctx, [
    'branch',
    '--list',
    '--format=%(HEAD)%1f%(refname:short)%1f%(upstream:short)%1f%(upstream:track,nobracket)',
  ]);
  if (r.exitCode !== 0) throw gitFailure('git branch failed.', r);
  const rows = r.stdout.split('\n').filter((l) => l !== '');
  if (rows.length === 0) {
    // Before the first commit the current branch exists only as a name in HEAD.
    const head = await git.run(ctx, ['symbolic-ref', '--short', '-q', 'HEAD']);
    const current = head.stdout.trim();
    return current === '' ? 'No branches yet.' : `* ${current} (no commits yet)`;
  }
  const lines = rows.slice(0, BRANCH_MAX_LISTED).map((row) => {
    const [head = '', name = '', upstream = '', track = ''] = row.split('\x1f');
    const mark = head === '*' ? '*' : ' ';
    const up = upstream === '' ? '' : ` (${upstream}${track === '' ? '' : `: ${track}`})`;
    return `${mark} ${name}${up}`;
  });
  if (rows.length > BRANCH_MAX_LISTED) {
    lines.push(
      `... and ${rows.length - BRANCH_MAX_LISTED} more (use the shell tool: git branch --list 'pattern*')`,
    );
  }
  return lines.join('\n');
}

/**
 * Lets through only what git accepts as a branch name, so a name can never be taken for an
 * option and shorthands such as `@{-1}` (which check-ref-format would expand) are refused.
 */
async function checkBranchName(git: GitRunner, ctx: ToolContext, name: string): Promise<string> {
  const advice = 'Use letters, digits and "/", "-", "_", "." (not at the start), e.g. "fix/login".';
  if (name.startsWith('-')) {
    throw new ToolError(`"${name}" is not a valid branch name: it cannot start with "-". ${advice}`);
  }
  const r = await git.run(ctx, ['check-ref-format', '--branch', name]);
  if (r.exitCode !== 0 || r.stdout.trim() !== name) {
    throw new ToolError(`"${name}" is not a valid branch name. ${advice}`);
  }
  return name;
}

async function createBranch(git: GitRunner, ctx: ToolContext, name: string): Promise<string> {
  const r = await git.run(ctx, ['branch', '--', name]);
  if (r.exitCode !== 0) {
    if (/already exists/.test(r.stderr)) {
      throw gitFailure(`Branch ${name} already exists. Use action=switch to move to it.`, r);
    }
    if (/not a valid object name/.test(r.stderr)) {
      throw gitFailure(
        'Cannot create a branch before the first commit; commit something with git_commit first.',
        r,
      );
    }
    throw gitFailure(`Could not create branch ${name}.`, r);
  }
  return `Created branch ${name} at HEAD; still on the current branch (use action=switch to move to it).`;
}

async function switchBranch(git: GitRunner, ctx: ToolContext, name: string): Promise<string> {
  const r = await git.run(ctx, ['switch', '--', name]);
  if (r.exitCode !== 0) {
    const err = r.stderr;
    if (/would be overwritten by checkout/.test(err)) {
      throw gitFailure(
        `Cannot switch to ${name}: uncommitted changes in files listed below would be overwritten. ` +
          'Commit them with git_commit (or stash them with the shell tool: git stash), then switch.',
        r,
      );
    }
    if (/untracked working tree files would be/.test(err)) {
      throw gitFailure(
        `Cannot switch to ${name}: untracked files listed below would be overwritten by files on that branch. ` +
          'Move, commit or delete them, then switch.',
        r,
      );
    }
    if (/invalid reference/.test(err)) {
      throw gitFailure(
        `No branch named ${name}. Use action=list to see branches or action=create to make it.`,
        r,
      );
    }
    if (/a branch is expected/.test(err)) {
      throw gitFailure(
        `${name} is not a branch. To look at a tag or commit, use the shell tool: git switch --detach ${name}.`,
        r,
      );
    }
    if (/resolve your current index|unmerged/.test(err)) {
      throw gitFailure('Cannot switch with unresolved merge conflicts; resolve and commit them first.', r);
    }
    throw gitFailure(`Could not switch to ${name}.`, r);
  }
  if (/^Already on /m.test(r.stderr)) return `Already on ${name}.`;
  // git lists the local changes it carried over as `M\tpath` on stdout.
  const carried = r.stdout
    .split('\n')
    .filter((l) => /^[A-Z]\t/.test(l))
    .map((l) => l.slice(2));
  const tracking = /set up to track '([^']+)'/.exec(r.stderr);
  const lines = [`Switched to ${name}${tracking ? ` (new, tracking ${tracking[1]})` : ''}.`];
  if (carried.length > 0) {
    const shown = carried.slice(0, 20).join(', ');
    const more = carried.length > 20 ? ` and ${carried.length - 20} more` : '';
    lines.push(`Uncommitted changes kept: ${shown}${more}.`);
  }
  return lines.join('\n');
}
