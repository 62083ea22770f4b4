import { readProjectContext } from '../agent/project-context.js';
import type { RuntimeOptions, SessionWiring } from '../agent/runtime.js';
import type { Config } from '../config/schema.js';
import { createClient } from '../llm/connection.js';
import type { Clock } from '../util/clock.js';
import { loadAgentDefinitions } from './definitions.js';
import { SubagentHost } from './host.js';
import { SlotPool } from './slots.js';
import { SUBAGENTS_GROUP, spawnTools } from './tools.js';

/** What a runtime needs for sub-agents: their tool group, whether it is on, the session wiring. */
export type SubagentSetup = Required<Pick<RuntimeOptions, 'groups' | 'groupsOn'>> & {
  wiring: SessionWiring;
  /** For the user before the first turn: agent definitions that were skipped or partly ignored. */
  notes: string[];
};

/**
 * Prepares sub-agents for a workspace: reads its agent definitions (they name the agents the spawn
 * tools offer) and its project notes (every brief carries them). The group is on when the config
 * says so, or by default in deep-work mode; naming it in `tools` offers it as well.
 */
export async function setupSubagents(
  config: Config,
  workspace: string,
  deepWork: boolean,
  ports: { clock?: Clock; home?: string } = {},
): Promise<SubagentSetup> {
  const [{ definitions, notes }, context] = await Promise.all([
    loadAgentDefinitions(workspace),
    readProjectContext(workspace),
  ]);
  const spawn = spawnTools(definitions);
  const tools = spawn.unbound;
  const on = config.subagents.enabled ?? deepWork;
  const wiring: SessionWiring = {
    // The session tools wired before this (wake-ups) are its children's too; those wired after
    // (memory) are the root session's only.
    wire(deps, connection) {
      if (!deps.tools.list().some((tool) => tools.includes(tool))) return deps;
      const counted = connection.kind === 'llamacpp' ? connection.info.slots : undefined;
      const slots = new SlotPool(counted ?? 1, counted !== undefined);
      const llm =
        slots.root === undefined ? deps.llm : createClient(connection, config, { slot: slots.root });
      const root = { ...deps, llm };
      const host = new SubagentHost({
        root,
        connection,
        config,
        context,
        definitions,
        spawnTools: spawn,
        slots,
        ...ports,
      });
      return {
        ...root,
        sessionTools: host.sessionTools({
          depth: 0,
          tools: deps.tools.list(),
          deferred: deps.tools.deferredGroups(),
          gate: deps.gate,
          tokenBudget: deps.tokenBudget,
        }),
      };
    },
  };
  return {
    groups: { [SUBAGENTS_GROUP]: [...tools] },
    groupsOn: on ? [SUBAGENTS_GROUP] : [],
    wiring,
    notes,
  };
}
