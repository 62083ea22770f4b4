/** A model to evaluate: its connection as Hearth resolves it for a session, and the facts the report names. */
import type { Config } from '../config/schema.js';
import { resolveConnection } from '../llm/connection.js';
import { quantisationOf } from '../llm/quantisation.js';
import type { EvalModelFacts } from '../store/eval-results.js';
import type { ModelUnderTest } from './attempt.js';

export type EvaluatedModel = ModelUnderTest & { facts: EvalModelFacts };

/** Asks the server once (its window, the model it runs, its quantisation); `label` defaults to the model id. */
export async function evaluatedModel(label: string | undefined, config: Config): Promise<EvaluatedModel> {
  const connection = await resolveConnection(config);
  const quantisation = await quantisationOf(
    connection.baseUrl,
    connection.kind,
    connection.model,
    config.api_key,
  );
  const name = label ?? connection.model;
  return {
    label: name,
    config,
    connection,
    facts: {
      label: name,
      server: connection.baseUrl,
      serverKind: connection.kind,
      model: connection.model,
      ...(quantisation ? { quantisation } : {}),
      contextWindow: connection.contextWindow,
      contextSource: connection.contextSource,
    },
  };
}
