import type { RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { GatewayApp, GatewayEnv, RouteDeps } from '../types.js';

type Handler<R extends RouteConfig> = RouteHandler<R, GatewayEnv>;

/**
 * One operation of the gateway: its OpenAPI description (what /doc lists and what requests are
 * validated against) and the handler that answers it. The handler is given the gateway's parts
 * when the app registers the route, so a route file is a list of constants, not a function.
 */
export interface GatewayRoute {
  readonly config: RouteConfig;
  register(app: GatewayApp, deps: RouteDeps): void;
}

/** A route from its `createRoute` description and its handler, typed by the description. */
export function route<R extends RouteConfig>(
  config: R,
  handler: (c: Parameters<Handler<R>>[0], deps: RouteDeps) => ReturnType<Handler<R>>,
): GatewayRoute {
  return {
    config,
    register(app, deps) {
      // The handler was checked against R where it was written; here R is only a type parameter.
      app.openapi(config, ((c: Parameters<Handler<R>>[0]) => handler(c, deps)) as Handler<RouteConfig>);
    },
  };
}
