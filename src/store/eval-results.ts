/**
 * What `hearth eval` keeps (src/eval/): a run (the suite, the models as their servers described
 * them, Hearth's version) and one result per model, task and attempt, written as each attempt
 * ends, so an interrupted run keeps what finished. Both backends store the same JSON bodies; the
 * columns beside them are what lists and look-ups need.
 */

/** One model as the run met it: the same facts for every task, said in the report. */
export interface EvalModelFacts {
  /** What the user named (a model or a profile), the key of its results. */
  label: string;
  /** The server's base URL and what kind of server answered there. */
  server: string;
  serverKind: string;
  /** The model id the server runs. */
  model: string;
  /** The quantisation, when the server says (LM Studio, Ollama). */
  quantisation?: string;
  /** The window every task of this model ran with: what its server really has. */
  contextWindow: number;
  contextSource: string;
}

export type EvalRunStatus = 'running' | 'finished' | 'interrupted';

export interface EvalRunRow {
  id: string;
  status: EvalRunStatus;
  /** `builtin`, or the suite folder's absolute path. */
  suite: string;
  /** The tasks run, in order. */
  tasks: string[];
  repeat: number;
  hearthVersion: string;
  models: EvalModelFacts[];
  createdAt: number;
  finishedAt?: number;
}

/** passed / failed: the check's exit code said so; crashed: the attempt could not be finished (never retried). */
export type EvalOutcome = 'passed' | 'failed' | 'crashed';

/** What one attempt cost and how it went, counted from its events. */
export interface EvalMetrics {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the server processed, and took from its cache, where it said (else 0). */
  processedTokens: number;
  cachedTokens: number;
  /** The agent's run, from the first request to its end (the check not included). */
  wallMs: number;
  turns: number;
  toolCalls: number;
  /** Calls whose text or arguments could not be read, with arguments the tool refused, to tools that do not exist. */
  unparsedCalls: number;
  invalidArgs: number;
  unknownTools: number;
  /** The run was stopped by the loop guard (the same call over and over). */
  loopStops: number;
  compactions: number;
  /** How the agent's run ended (completed, max_iterations, budget, loop, error, aborted, timeout). */
  stop: string;
}

export interface EvalResultRow {
  runId: string;
  /** The model's label (EvalModelFacts.label). */
  model: string;
  task: string;
  /** 1 to the run's repeat. */
  attempt: number;
  outcome: EvalOutcome;
  /** The stored session with the transcript (`hearth sessions show ID`). */
  sessionId?: string;
  metrics: EvalMetrics;
  /** The check's exit code and output (its tail); a crash's reason in `error`. */
  checkExit?: number;
  checkOutput: string;
  error?: string;
  createdAt: number;
}

export interface EvalResultStore {
  /** Records a new run as running. */
  startRun(run: Omit<EvalRunRow, 'status' | 'finishedAt'>): Promise<void>;
  /** Marks how the run ended. */
  endRun(id: string, status: Exclude<EvalRunStatus, 'running'>, at: number): Promise<void>;
  /** Keeps one attempt's result; an attempt is recorded once (a second record of it is an error). */
  record(result: EvalResultRow): Promise<void>;
  /** The runs, newest first. */
  runs(limit?: number): Promise<EvalRunRow[]>;
  /** A run by its id or a unique prefix of it. */
  find(idOrPrefix: string): Promise<EvalRunRow | undefined>;
  /** A run's results in the order they were recorded. */
  results(runId: string): Promise<EvalResultRow[]>;
}

/** The JSON body kept for a run: everything but the columns. */
export function runBody(run: Omit<EvalRunRow, 'status' | 'finishedAt'>): string {
  const { id: _id, createdAt: _at, ...rest } = run;
  return JSON.stringify(rest);
}

export interface RawRun {
  id: string;
  status: string;
  body: string;
  created_at: number | string;
  finished_at: number | string | null;
}

export function toRun(raw: RawRun): EvalRunRow {
  return {
    ...(JSON.parse(raw.body) as Omit<EvalRunRow, 'id' | 'status' | 'createdAt' | 'finishedAt'>),
    id: raw.id,
    status: raw.status as EvalRunStatus,
    createdAt: Number(raw.created_at),
    ...(raw.finished_at !== null ? { finishedAt: Number(raw.finished_at) } : {}),
  };
}

/** The LIKE pattern both backends look a run up by: the prefix, its wildcards escaped with `\\`. */
export function prefixPattern(idOrPrefix: string): string {
  return `${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`;
}

/** Of the (at most two) runs a prefix matched: the exact one, else the only one; undefined when ambiguous. */
export function pickRun(raws: RawRun[], idOrPrefix: string): EvalRunRow | undefined {
  const exact = raws.find((r) => r.id === idOrPrefix);
  if (exact) return toRun(exact);
  return raws.length === 1 ? toRun(raws[0]!) : undefined;
}

/** A result's columns in the order both backends insert them: run, model, task, attempt, outcome, session, body, time. */
export function resultParams(result: EvalResultRow): Array<string | number | null> {
  return [
    result.runId,
    result.model,
    result.task,
    result.attempt,
    result.outcome,
    result.sessionId ?? null,
    resultBody(result),
    result.createdAt,
  ];
}

function resultBody(result: EvalResultRow): string {
  const {
    runId: _r,
    model: _m,
    task: _t,
    attempt: _a,
    outcome: _o,
    sessionId: _s,
    createdAt: _c,
    ...rest
  } = result;
  return JSON.stringify(rest);
}

export interface RawResult {
  run_id: string;
  model: string;
  task: string;
  attempt: number;
  outcome: string;
  session_id: string | null;
  body: string;
  created_at: number | string;
}

export function toResult(raw: RawResult): EvalResultRow {
  return {
    ...(JSON.parse(raw.body) as Pick<EvalResultRow, 'metrics' | 'checkExit' | 'checkOutput' | 'error'>),
    runId: raw.run_id,
    model: raw.model,
    task: raw.task,
    attempt: Number(raw.attempt),
    outcome: raw.outcome as EvalOutcome,
    ...(raw.session_id ? { sessionId: raw.session_id } : {}),
    createdAt: Number(raw.created_at),
  };
}
