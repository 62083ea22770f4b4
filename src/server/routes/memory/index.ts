import type { GatewayRoute } from '../route.js';
import { memoryRoutes } from './memories.js';
import { proposalRoutes } from './proposals.js';

/**
 * Long-term memory over HTTP, as `hearth memory` has it: list, search, add, forget, export, and
 * the review of what reflection proposed. Same database, same scoping: a workspace sees its own
 * memories and the user-wide ones.
 */
export const memoryRouteList: readonly GatewayRoute[] = [...memoryRoutes, ...proposalRoutes];
