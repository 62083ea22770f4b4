import type { HttpBindings } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Guard } from './guard.js';
import type { SessionHub } from './hub.js';

export type GatewayEnv = { Bindings: HttpBindings };
export type GatewayApp = OpenAPIHono<GatewayEnv>;

/** What the routes are built from. */
export interface RouteDeps {
  hub: SessionHub;
  guard: Guard;
  version: string;
  now: () => number;
}
