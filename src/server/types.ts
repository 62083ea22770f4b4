import type { HttpBindings } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { EvalResultStore } from '../store/eval-results.js';
import type { Guard } from './guard.js';
import type { SessionHub } from './hub.js';
import type { GatewayMemory } from './memory-access.js';
import type { GatewayPipeline } from './pipeline.js';
import type { GatewayScheduler } from './scheduler.js';
import type { SocketLimits } from './socket-client.js';

export type GatewayEnv = { Bindings: HttpBindings };
export type GatewayApp = OpenAPIHono<GatewayEnv>;

/** What the routes are built from. */
export interface RouteDeps {
  hub: SessionHub;
  guard: Guard;
  memory: GatewayMemory;
  scheduler: GatewayScheduler;
  pipeline: GatewayPipeline;
  /** `hearth eval`'s runs and results, in the gateway's Storage. */
  evals: () => Promise<EvalResultStore>;
  version: string;
  now: () => number;
  log: (line: string) => void;
  /** How far a WebSocket client may fall behind before it is closed (./socket-client.ts). */
  sockets: SocketLimits;
  /** The Hearth home: the projects registry and other user files. */
  hearthHome: string;
}
