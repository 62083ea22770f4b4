import type { GatewayRoute } from '../route.js';
import { inboxRoutes } from './inbox.js';
import { jobRoutes } from './jobs.js';

/**
 * The agent_computer seed's cron endpoints (its response shapes, with Hearth's fields beside
 * them), the runs of a job, and the inbox, over the gateway's `SchedulerService`.
 */
export const cronRouteList: readonly GatewayRoute[] = [...jobRoutes, ...inboxRoutes];
