import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

// `hearth eval`'s kept runs (docs/eval.md): pick a run, see its table per model.

interface Model {
  label: string;
  server: string;
  serverKind: string;
  model: string;
  quantisation?: string;
  contextWindow: number;
}
interface Run {
  id: string;
  status: string;
  suite: string;
  tasks: string[];
  repeat: number;
  hearthVersion: string;
  models: Model[];
  createdAt: number;
}
interface Summary {
  label: string;
  attempts: number;
  passed: number;
  crashed: number;
  passRate: number;
  spread: { min: number; max: number };
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  wallMs: number;
  tokensPerSecond: number;
  unparsedCalls: number;
  invalidArgs: number;
  unknownTools: number;
  loopStops: number;
  compactions: number;
}

const percent = (rate: number) => `${Math.round(rate * 100)}%`;

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
                <th>pass</th>
                <th>spread</th>
                <th>passed</th>
                <th>crashed</th>
                <th>tokens in/out</th>
                <th>cached</th>
                <th>time</th>
                <th>tok/s</th>
                <th>call errors</th>
                <th>loops</th>
                <th>compactions</th>
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
                    <td>{percent(s.passRate)}</td>
                    <td>
                      {s.spread.min === s.spread.max
                        ? '-'
                        : `${percent(s.spread.min)}–${percent(s.spread.max)}`}
                    </td>
                    <td>
                      {s.passed}/{s.attempts}
                    </td>
                    <td>{s.crashed}</td>
                    <td>
                      {s.promptTokens}/{s.completionTokens}
                    </td>
                    <td>{s.cachedTokens}</td>
                    <td>{(s.wallMs / 1000).toFixed(1)}s</td>
                    <td>{s.tokensPerSecond}</td>
                    <td>{s.unparsedCalls + s.invalidArgs + s.unknownTools}</td>
                    <td>{s.loopStops}</td>
                    <td>{s.compactions}</td>
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
