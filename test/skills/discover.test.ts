/**
 * Skill discovery over real folders. The SKILL.md fields and their limits are the Agent Skills
 * specification's (https://agentskills.io/specification): `name` 1-64 lowercase letters, digits
 * and single hyphens, equal to the folder's name; `description` 1-1024 characters; optional
 * `license`, `compatibility` (≤ 500), `metadata` (string → string), `allowed-tools`.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverSkills, skillRoots } from '../../src/skills/discover.js';
import { skillsSection } from '../../src/skills/prompt.js';

let workspace: string;
let home: string;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'hearth-skills-')));
  home = await realpath(await mkdtemp(join(tmpdir(), 'hearth-skills-home-')));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

async function skill(root: string, folder: string, text: string): Promise<string> {
  const dir = join(root, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), text);
  return dir;
}
const skillMd = (name: string, description: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n\nSteps for ${name}.\n`;
const discover = () => discoverSkills(skillRoots(workspace, home), workspace);

describe('skill discovery', () => {
  it('finds skills in .hearth/skills, .agents/skills, .claude/skills and ~/.hearth/skills, with every spec field', async () => {
    await skill(
      join(workspace, '.hearth/skills'),
      'release-notes',
      skillMd('release-notes', 'Write release notes from the git log.'),
    );
    await skill(
      join(workspace, '.agents/skills'),
      'pdf-processing',
      [
        '---',
        'name: pdf-processing',
        'description: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDFs.',
        'license: Apache-2.0',
        'compatibility: Requires python3 and pdfplumber',
        'metadata:',
        '  author: example-org',
        '  version: "1.0"',
        'allowed-tools: Bash(python3:*) Read',
        '---',
        '',
        'Use pdfplumber to extract text.',
      ].join('\n'),
    );
    await skill(
      join(workspace, '.claude/skills'),
      'explain-code',
      skillMd(
        'explain-code',
        'Explain code with diagrams.',
        'argument-hint: "[file]"\ndisable-model-invocation: true\n',
      ),
    );
    await skill(join(home, 'skills'), 'commit-msg', skillMd('commit-msg', 'Write a commit message.'));

    const { skills, problems } = await discover();
    expect(problems).toEqual([]);
    expect(skills.map((s) => [s.name, s.root.label])).toEqual([
      ['release-notes', '.hearth/skills'],
      ['pdf-processing', '.agents/skills'],
      ['explain-code', '.claude/skills'],
      ['commit-msg', '~/.hearth/skills'],
    ]);
    const pdf = skills[1]!;
    expect(pdf).toMatchObject({
      license: 'Apache-2.0',
      compatibility: 'Requires python3 and pdfplumber',
      metadata: { author: 'example-org', version: '1.0' },
      allowedTools: ['Bash(python3:*)', 'Read'],
      body: 'Use pdfplumber to extract text.',
      dir: join(workspace, '.agents/skills/pdf-processing'),
    });
    expect(skills[2]).toMatchObject({ modelInvocable: false, userInvocable: true, argumentHint: '[file]' });
  });

  it('reports each invalid skill with its reason instead of skipping it', async () => {
    const root = join(workspace, '.claude/skills');
    await skill(root, 'no-description', '---\nname: no-description\n---\nbody\n');
    await skill(root, 'wrong-folder', skillMd('other-name', 'x'));
    await skill(root, 'Upper', skillMd('Upper', 'x'));
    await skill(root, 'bad-yaml', '---\nname: bad-yaml\ndescription: [unclosed\n---\n');
    await skill(root, 'no-frontmatter', '# Just markdown\n');
    await skill(root, 'long-description', skillMd('long-description', 'x'.repeat(1025)));
    await mkdir(join(root, 'empty-folder'));
    const outside = await skill(home, 'elsewhere', skillMd('elsewhere', 'x'));
    await symlink(outside, join(root, 'elsewhere'));

    const { skills, problems } = await discover();
    expect(skills).toEqual([]);
    const reasons = Object.fromEntries(problems.map((p) => [p.path.slice(root.length + 1), p.reason]));
    expect(reasons).toEqual({
      'bad-yaml': expect.stringMatching(/^its frontmatter is not valid YAML/),
      'empty-folder': 'has no SKILL.md',
      elsewhere: `leads outside the workspace (to ${outside})`,
      'long-description': 'description is longer than 1024 characters',
      'no-description': 'description is missing',
      'no-frontmatter': 'SKILL.md does not start with YAML frontmatter between --- lines',
      Upper: 'name may hold only lowercase letters, digits and single hyphens, not at either end',
      'wrong-folder': 'name "other-name" does not match its folder "wrong-folder"',
    });
  });

  it('the first skill of a name wins, and the shadowed one is reported', async () => {
    await skill(join(workspace, '.hearth/skills'), 'deploy', skillMd('deploy', 'Project deploy.'));
    await skill(join(home, 'skills'), 'deploy', skillMd('deploy', 'My deploy.'));
    const { skills, problems } = await discover();
    expect(skills.map((s) => s.description)).toEqual(['Project deploy.']);
    expect(problems[0]!.reason).toBe('the skill "deploy" in .hearth/skills takes precedence over this one');
  });
});

describe('the skills section of the prompt', () => {
  it('lists names and short descriptions within a budget, then names only', async () => {
    const root = join(workspace, '.agents/skills');
    for (let i = 0; i < 40; i++) {
      const name = `skill-${String(i).padStart(2, '0')}`;
      await skill(root, name, skillMd(name, `Does task number ${i} ${'carefully '.repeat(30)}`));
    }
    const { skills } = await discover();
    const section = skillsSection(skills)!;
    expect(section.length).toBeLessThan(3400);
    expect(section).toMatch(/^- skill-00: Does task number 0 carefully/m);
    expect(section).toMatch(/…$/m);
    expect(section).toMatch(/^- Also: skill-\d\d, .*skill-39 \(load one to see what it does\)\.$/m);
  });

  it('leaves out skills only the user may invoke, and is absent with none', async () => {
    await skill(
      join(workspace, '.agents/skills'),
      'only-me',
      skillMd('only-me', 'x', 'disable-model-invocation: true\n'),
    );
    expect(skillsSection((await discover()).skills)).toBeUndefined();
  });
});
