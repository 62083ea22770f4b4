/**
 * "Claims done but is not": each seeded case is caught by the mechanical checks, sent back to the
 * coder with the finding, and never reaches the reviewer until it is fixed.
 */
import { expect, it } from 'vitest';
import { roleOf, runOnce, titleOf, usePipeline } from './support.js';

const pipeline = usePipeline();

const CASES: Array<{
  title: string;
  files: string[];
  first: Record<string, string>;
  fixed: Record<string, string>;
  finding: string;
}> = [
  {
    title: 'missing file',
    files: ['a.txt'],
    first: {},
    fixed: { 'a.txt': 'a\n' },
    finding: 'a.txt does not exist',
  },
  {
    title: 'broken json',
    files: ['b.json'],
    first: { 'b.json': '{"a": 1,' },
    fixed: { 'b.json': '{"a": 1}' },
    finding: 'b.json does not parse',
  },
  {
    title: 'broken yaml',
    files: ['c.yaml'],
    first: { 'c.yaml': 'a: [1, 2\n' },
    fixed: { 'c.yaml': 'a: [1, 2]\n' },
    finding: 'c.yaml does not parse',
  },
  {
    title: 'broken js',
    files: ['d.js'],
    first: { 'd.js': 'function (' },
    fixed: { 'd.js': 'export const d = 1;\n' },
    finding: 'd.js has a syntax error',
  },
  {
    title: 'broken python',
    files: ['e.py'],
    first: { 'e.py': 'def f(:\n' },
    fixed: { 'e.py': 'def f():\n    return 1\n' },
    finding: 'e.py has a syntax error',
  },
];

it('sends each failing check back to the coder without a review, then reviews the fixed work once', async () => {
  const { bench, server, plans } = await pipeline.start(
    {
      tasks: CASES.map((c) => ({ title: c.title, files: c.files })),
      coder: (title, round) => {
        const c = CASES.find((x) => x.title === title)!;
        return round === 1 ? c.first : round === 2 ? c.fixed : {};
      },
    },
    '# Seeded failures',
  );
  await runOnce(bench, { baseUrl: server.baseUrl });

  expect((await plans.tasks()).map((t) => [t.title, t.state, t.rework])).toEqual(
    CASES.map((c) => [c.title, 'done', 0]),
  );
  for (const c of CASES) {
    const asked = server.requests.filter((r) => titleOf(r.body) === c.title);
    const reviews = asked.filter((r) => roleOf(r.body) === 'reviewer');
    expect(reviews, c.title).toHaveLength(1);
    // The finding reached the coder as the next message of its own session.
    const feedback = asked.find(
      (r) =>
        roleOf(r.body) === 'coder' &&
        r.body.messages.filter((m: { role: string }) => m.role === 'user').length === 2,
    );
    expect(feedback?.body.messages.at(-1).content).toContain(c.finding);
    // A review only came after the fix.
    expect(asked.indexOf(reviews[0]!)).toBeGreaterThan(asked.indexOf(feedback!));
  }
}, 120_000);

it('catches a path outside the workspace and a failing test command, in the sandbox', async () => {
  const { bench, server, plans } = await pipeline.start(
    {
      tasks: [
        { title: 'escape', files: ['../outside.txt'] },
        { title: 'tested', files: ['f.txt'] },
      ],
      coder: (title, round): Record<string, string> =>
        title === 'tested' ? { 'f.txt': round === 1 ? 'wrong\n' : 'right\n' } : {},
    },
    '# Escapes and tests',
  );
  await runOnce(bench, {
    baseUrl: server.baseUrl,
    commands: ['grep -q right f.txt || { echo "f.txt should say right"; exit 1; }'],
    limits: { maxRework: 3, stepBackAt: 2, impasseAt: 3 },
  });
  const [escaping, tested] = await plans.tasks();
  expect(escaping!.state).toBe('failed');
  expect(escaping!.error).toContain('impasse');
  expect(escaping!.error).toContain('../outside.txt is outside the workspace');
  expect(tested!.state).toBe('done');
  const coderAsked = server.requests.filter(
    (r) => titleOf(r.body) === 'tested' && roleOf(r.body) === 'coder',
  );
  expect(
    coderAsked.some((r) => String(r.body.messages.at(-1).content).includes('f.txt should say right')),
  ).toBe(true);
  // The same finding twice: the coder is told to step back.
  const escapeAsked = server.requests.filter((r) => titleOf(r.body) === 'escape');
  expect(escapeAsked.some((r) => String(r.body.messages.at(-1).content).includes('Step back'))).toBe(true);
  expect(escapeAsked.filter((r) => roleOf(r.body) === 'reviewer')).toHaveLength(0);
}, 120_000);
