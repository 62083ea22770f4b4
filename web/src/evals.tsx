import { useEffect, useState } from 'preact/hooks';
import { SUMMARY_COLUMNS } from '../../src/eval/figures.js';
import type { ModelSummary as Summary } from '../../src/eval/summary.js';
import type { EvalRunRow as Run } from '../../src/store/eval-results.js';
import { api } from './api.js';

// `hearth eval`'s kept runs (docs/eval.md): pick a run, see its table per model.

/** The kept eval runs, newest first: nothing shown until there is one. */
export function EvalPanel({ onError }: { onError: (message: string) => void }) {
  const [runs, setRuns] = useState<Run[]>([]);
  const [chosen, setChosen] = useState<string | undefined>();
  const [shown, setShown] = useState<{ run: Run; summary: Summary[] } | undefined>();
  useEffect(() => {
    api<{ runs: Array<{ run: Run }> }>('/api/evals?limit=20')
      .then((r) => {
        setRuns(r.runs.map((x) => x.run));
        setChosen((c) => c ?? r.runs[0]?.run.id);
      })
      .catch((err: Error) => onError(err.message));
  }, [onError]);
  useEffect(() => {
    if (!chosen) return;
    api<{ run: Run; summary: Summary[] }>(`/api/evals/${encodeURIComponent(chosen)}`)
      .then(setShown)
      .catch((err: Error) => onError(err.message));
  }, [chosen, onError]);
  if (runs.length === 0) return null;
  return (
    <section class="evals" aria-label="Model evaluations">
      <h2>
        Model evaluations{' '}
        <select
          aria-label="Eval run"
          value={chosen}
          onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}
        >
          {runs.map((r) => (
            <option key={r.id} value={r.id}>
              {r.id} · {new Date(r.createdAt).toLocaleString()} · {r.status}
            </option>
          ))}
        </select>
      </h2>
      {shown && (
        <>
          <p class="muted">
            Suite {shown.run.suite}: {shown.run.tasks.length} tasks × {shown.run.repeat} · Hearth{' '}
            {shown.run.hearthVersion}
          </p>
          <table class="eval-table" data-run={shown.run.id}>
            <thead>
              <tr>
                <th>model</th>
                {SUMMARY_COLUMNS.map((c) => (
                  <th key={c.head} title={c.title}>
                    {c.head}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.summary.map((s) => {
                const facts = shown.run.models.find((m) => m.label === s.label);
                return (
                  <tr key={s.label} data-model={s.label}>
                    <td
                      title={
                        facts &&
                        `${facts.model} on ${facts.serverKind} at ${facts.server}${facts.quantisation ? `, ${facts.quantisation}` : ''}, window ${facts.contextWindow}`
                      }
                    >
                      {s.label}
                    </td>
                    {SUMMARY_COLUMNS.map((c) => (
                      <td key={c.head}>{c.cell(s)}</td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
