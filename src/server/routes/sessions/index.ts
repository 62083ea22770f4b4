import type { GatewayRoute } from '../route.js';
import { drivingRoutes } from './driving.js';
import { readingRoutes } from './reading.js';
import { rewindRoutes } from './rewind.js';
import { sessionRoutes } from './sessions.js';

/** Every operation on /api/sessions and one session (its files aside: ../files.ts). */
export const sessionRouteList: readonly GatewayRoute[] = [
  ...sessionRoutes,
  ...readingRoutes,
  ...drivingRoutes,
  ...rewindRoutes,
];
