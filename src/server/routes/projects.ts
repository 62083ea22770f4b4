import { createRoute, z } from '@hono/zod-openapi';
import { lastUsed, readProjects } from '../../config/projects.js';
import { json, refusals } from '../schemas.js';
import { type GatewayRoute, route } from './route.js';

// The projects registry (`hearth projects`): the web UI starts sessions in a project's folder.

const listProjects = route(
  createRoute({
    method: 'get',
    path: '/api/projects',
    tags: ['projects'],
    summary:
      'The registered projects (hearth projects); create a session in one with its path as `workspace`',
    responses: {
      200: json(
        z.object({
          projects: z.array(
            z.object({
              name: z.string(),
              path: z.string(),
              model: z.string().nullable().openapi({ description: 'Its default model or profile.' }),
              last_used: z.boolean(),
            }),
          ),
        }),
        'Projects',
      ),
      ...refusals,
    },
  }),
  async (c, { hearthHome }) => {
    const registry = await readProjects(hearthHome);
    const last = lastUsed(registry);
    const projects = registry.projects.map((p) => ({
      name: p.name,
      path: p.path,
      model: p.defaults.model ?? null,
      last_used: p.name === last,
    }));
    return c.json({ projects }, 200);
  },
);

export const projectRouteList: readonly GatewayRoute[] = [listProjects];
