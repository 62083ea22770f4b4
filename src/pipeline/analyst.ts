/**
 * LAO's analyst role: before a plan is split into tasks, one request reads what the repository has
 * for it (the files ranked for the plan, with their first lines, and the tree's paths) and writes a
 * short findings report: what exists, what the plan must fit into, risks. The planner gets the plan
 * with the findings after it; the report is kept in the plan's log (so a run resumed after a crash
 * plans from the same findings, never asking again) and written to `.hearth/analysis/plan-N.md`.
 * `pipeline.analyst` switches it on; it uses the planner's model.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { rankRelevantFiles } from '../tools/search/relevant-files.js';
import { searchScope } from '../tools/search/scope.js';
import { walkFiles } from '../tools/search/walk.js';
import type { RoleClient } from './llm-call.js';
import { writeSafely } from './project-state.js';
import type { PlanRow } from './types.js';
import type { PipelineDeps } from './worker.js';

const ANALYST_PROMPT = `You analyse a repository before a plan is split into coding tasks. From the plan and the files shown, write short findings in Markdown: what already exists that the plan touches (name the files), conventions the code follows, what is missing, and risks. At most 200 words. No code.`;

const PATHS = 80;
const EXCERPTS = 5;
const EXCERPT_CHARS = 800;

const analysisFile = (planId: number) => `.hearth/analysis/plan-${planId}.md`;

/**
 * The plan as the planner gets it: with the analyst's findings, asked once per plan. Without an
 * answer (the request failed) the plan goes to the planner as it is, and the failure is logged.
 */
export async function analysePlan(
  deps: Pick<PipelineDeps, 'planner' | 'plans' | 'workspace' | 'signal' | 'emit'>,
  plan: PlanRow,
): Promise<{ plan: PlanRow; tokens: number }> {
  const { plans, workspace, signal } = deps;
  const kept = (await plans.logOf(plan.id, 'analysis'))[0]?.body as { text?: string } | undefined;
  let text = kept?.text;
  let tokens = 0;
  if (kept === undefined) {
    const answer = await ask(deps.planner, workspace, plan, signal ?? new AbortController().signal);
    tokens = answer.tokens;
    if (signal?.aborted) return { plan, tokens };
    await plans.log(
      { id: null, planId: plan.id },
      'analysis',
      answer.ok ? { text: answer.text } : { error: answer.error },
    );
    await plans.log({ id: null, planId: plan.id }, 'tokens', { role: 'planner', tokens });
    if (answer.ok) {
      text = answer.text;
      const file = analysisFile(plan.id);
      const written = await writeSafely(
        workspace,
        file,
        `# Analysis of plan #${plan.id}: ${plan.title}\n\n${text}\n`,
      ).then(
        () => true,
        () => false,
      );
      deps.emit({ type: 'plan_analysed', planId: plan.id, ...(written ? { file } : {}) });
    } else {
      deps.emit({ type: 'plan_analysed', planId: plan.id, error: answer.error });
    }
  }
  return {
    plan: text ? { ...plan, markdown: `${plan.markdown}\n\n## The analyst's findings\n\n${text}` } : plan,
    tokens,
  };
}

async function ask(
  role: RoleClient,
  workspace: string,
  plan: PlanRow,
  signal: AbortSignal,
): Promise<{ ok: true; text: string; tokens: number } | { ok: false; error: string; tokens: number }> {
  const ranked = await rankRelevantFiles(workspace, plan.markdown, { signal, limit: EXCERPTS }).catch(
    () => [],
  );
  const excerpts = await Promise.all(
    ranked.map(async (f) => {
      const text = await readFile(path.join(workspace, f.path), 'utf8').catch(() => '');
      return `${f.path}:\n${text.slice(0, EXCERPT_CHARS)}`;
    }),
  );
  const paths: string[] = [];
  for await (const batch of walkFiles({ scope: await searchScope(workspace, workspace), signal })) {
    paths.push(...batch.map((f) => f.path));
    if (paths.length >= PATHS) break;
  }
  const content = [
    `The plan:\n${plan.markdown}`,
    `Files in the repository${paths.length >= PATHS ? ` (the first ${PATHS})` : ''}:\n${paths.slice(0, PATHS).join('\n') || '(none)'}`,
    excerpts.length ? `The files most related to the plan:\n\n${excerpts.join('\n\n')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
  const messages = [
    { role: 'system' as const, content: ANALYST_PROMPT },
    { role: 'user' as const, content },
  ];
  for await (const event of role.llm.stream({ messages, signal })) {
    if (event.type === 'done') {
      const tokens = (event.usage?.prompt ?? 0) + (event.usage?.completion ?? 0);
      const text = (event.message.content ?? '').trim();
      return text ? { ok: true, text, tokens } : { ok: false, error: 'the analyst gave no findings', tokens };
    }
    if (event.type === 'error') return { ok: false, error: event.error.message, tokens: 0 };
  }
  return { ok: false, error: 'the model stream ended without a reply', tokens: 0 };
}
