import { authRouteList } from './auth.js';
import { chatRouteList } from './chat.js';
import { cronRouteList } from './cron/index.js';
import { evalRouteList } from './evals.js';
import { fileRouteList } from './files.js';
import { gatewayRouteList } from './gateway.js';
import { memoryRouteList } from './memory/index.js';
import { modelRouteList } from './models.js';
import { pipelineRouteList } from './pipeline.js';
import { projectRouteList } from './projects.js';
import type { GatewayRoute } from './route.js';
import { sessionRouteList } from './sessions/index.js';
import { socketRouteList } from './sockets.js';

/** Every operation of the gateway, each a constant beside its handler; /doc lists them in this order. */
export const gatewayRoutes: readonly GatewayRoute[] = [
  ...authRouteList,
  ...gatewayRouteList,
  ...chatRouteList,
  ...modelRouteList,
  ...sessionRouteList,
  ...fileRouteList,
  ...memoryRouteList,
  ...cronRouteList,
  ...pipelineRouteList,
  ...evalRouteList,
  ...projectRouteList,
  ...socketRouteList,
];
