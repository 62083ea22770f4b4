import type { HttpBindings } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Guard } from './guard.js';
import type { SessionHub } from './hub.js';
import type { GatewayMemory } from './memory-access.js';
import type { GatewayPipeline } from './pipeline.js';
import type { GatewayScheduler } from './scheduler.js';

export type GatewayEnv = { Bindings: HttpBindings };
export type GatewayApp = OpenAPIHono<GatewayEnv>;

/** What the routes are built from. */
export interface RouteDeps {
  hub: SessionHub;
  guard: Guard;
  memory: GatewayMemory;
  scheduler: GatewayScheduler;
  pipeline: GatewayPipeline;
  version: string;
  now: () => number;
  log: (line: string) => void;
  /** The Hearth home: the projects registry and other user files. */
  hearthHome: string;
}
