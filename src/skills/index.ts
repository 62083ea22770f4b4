import path from 'node:path';
import type { NamedPrompt } from '../agent/runtime.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { AnyTool } from '../tools/types.js';
import { loadAgentTool } from './agent-tools.js';
import { discoverSkills, type Skill, type SkillCatalog, type SkillProblem, skillRoots } from './discover.js';
import { promoteTool } from './promote.js';
import { skillInvocation, skillsSection } from './prompt.js';
import { skillTool } from './skill-tool.js';

export type { Skill, SkillCatalog } from './discover.js';
export { discoverSkills, skillRoots } from './discover.js';
export { removeSkill } from './skill-store.js';

/** The group `promote_tool` is in: offered only when named, like the tool itself. */
export const PROMOTE_GROUP = 'promote_tool';

export interface LoadedSkills {
  catalog: SkillCatalog;
  /** Offered unless switched off: the skill tool (when there are skills) and the agent-made tools. */
  tools: AnyTool[];
  /** Offered only when named (`--tools default,promote_tool`): it costs tokens in every request. */
  groups: Record<string, AnyTool[]>;
  /** The system prompt's list of skills; undefined with none. */
  section?: string;
  commands: NamedPrompt[];
  /** One line per skill that did not load, for the start of a run. */
  notes: string[];
}

/**
 * Everything skills add to a session: found in the workspace's `.hearth/skills`, `.agents/skills`,
 * `.claude/skills` and the user's `~/.hearth/skills`.
 */
export async function loadSkills(opts: {
  workspace: string;
  hearthHome: string;
  registry: () => ToolRegistry;
  /** Names agent-made tools may not take. */
  reserved: ReadonlySet<string>;
}): Promise<LoadedSkills> {
  const roots = skillRoots(opts.workspace, opts.hearthHome);
  const reserved = new Set([...opts.reserved, 'skill']);
  const catalog = await discoverSkills(roots, opts.workspace);
  const tools: AnyTool[] = [];
  const problems: SkillProblem[] = [...catalog.problems];
  for (const skill of catalog.skills) {
    const tool = await loadAgentTool(skill, opts.workspace);
    if (tool === undefined) continue;
    if (!('run' in tool)) problems.push(tool);
    else if (reserved.has(tool.name))
      problems.push({ path: skill.dir, reason: `its tool is named like a built-in one (${tool.name})` });
    else tools.push(tool);
  }
  catalog.problems = problems;
  if (catalog.skills.some((s) => s.modelInvocable)) tools.unshift(skillTool(catalog.skills));
  const promote = promoteTool({
    registry: opts.registry,
    reserved,
    skillsDir: roots[0]!.dir,
  });
  return {
    catalog,
    tools,
    groups: { [PROMOTE_GROUP]: [promote] },
    section: skillsSection(catalog.skills),
    commands: catalog.skills
      .filter((s) => s.userInvocable)
      .map((skill) => ({
        name: skill.name,
        summary: skill.description,
        task: (args: string) => skillInvocation(skill, args),
      })),
    notes: problems.map(describeProblem),
  };
}

function describeProblem(problem: SkillProblem): string {
  return `Skill not loaded: ${problem.path}: ${problem.reason}`;
}

/** A skill by name, with the folder it is in: for `hearth skills show` and `rm`. */
export function findSkill(catalog: SkillCatalog, name: string): Skill | undefined {
  return catalog.skills.find((s) => s.name === name);
}

export function skillLocation(skill: Skill, workspace: string): string {
  const rel = path.relative(workspace, skill.dir);
  return rel.startsWith('..') || path.isAbsolute(rel) ? skill.dir : rel;
}
