import type {
  SessionConfigOption,
  SessionConfigSelectOption,
  SessionModeState,
} from '@agentclientprotocol/sdk';
import type { Config } from '../config/schema.js';
import type { Connection } from '../llm/connection.js';
import { listModels, pickChatModel } from '../llm/discover.js';

/**
 * ACP's session config options (stable in protocol v1; `session/set_model` is only in the unstable
 * schema): the model as a "model" select, and the permission mode as a "mode" select too, since a
 * client that reads config options uses them instead of the older `modes`.
 */
export const MODE_OPTION = 'mode';
export const MODEL_OPTION = 'model';

/** The models a session may switch to, and the one in use. */
export interface ModelChoice {
  current: string;
  options: SessionConfigSelectOption[];
}

/**
 * The config's profiles (`models:`, chosen as with `-m NAME`) and the chat models the server lists,
 * the one in use among them even when the server does not list it. A server that does not answer
 * the list leaves the profiles and the model in use.
 */
export async function modelChoice(
  config: Pick<Config, 'models' | 'api_key'>,
  connection: Connection,
  profile: string | undefined,
): Promise<ModelChoice> {
  const options: SessionConfigSelectOption[] = Object.entries(config.models).map(([name, p]) => ({
    value: name,
    name,
    description: `Profile: ${p.model}${p.base_url ? ` at ${p.base_url}` : ''}`,
  }));
  const listed = connection.embedded
    ? []
    : (connection.models ??
      (await listModels(connection.baseUrl, { apiKey: config.api_key, timeoutMs: 5000 }).catch(() => [])));
  const current = profile ?? connection.model;
  const served = [...new Set([...(profile ? [] : [connection.model]), ...listed])];
  for (const id of served)
    if (pickChatModel([id]) && !options.some((o) => o.value === id))
      options.push({ value: id, name: id, description: `On ${connection.baseUrl}` });
  if (!options.some((o) => o.value === current)) options.unshift({ value: current, name: current });
  return { current, options };
}

/** The options as the editor shows them, with their current values. */
export function configOptions(modes: SessionModeState, model: ModelChoice): SessionConfigOption[] {
  return [
    {
      id: MODE_OPTION,
      name: 'Mode',
      description: 'What runs without asking',
      category: 'mode',
      type: 'select',
      currentValue: modes.currentModeId,
      options: modes.availableModes.map((m) => ({
        value: m.id,
        name: m.name,
        description: m.description ?? null,
      })),
    },
    {
      id: MODEL_OPTION,
      name: 'Model',
      description: 'A profile of the config, or a model the server lists',
      category: 'model',
      type: 'select',
      currentValue: model.current,
      options: model.options,
    },
  ];
}
