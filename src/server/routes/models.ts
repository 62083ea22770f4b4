import { createRoute, z } from '@hono/zod-openapi';
import { json, jsonBody, problemResponse, refusals } from '../schemas.js';
import { type GatewayRoute, route } from './route.js';

// The models the model server offers, and switching between them at run time.

const listModels = route(
  createRoute({
    method: 'get',
    path: '/api/models',
    tags: ['models'],
    summary: 'The models the model server offers, and the one in use',
    responses: {
      200: json(
        z.object({
          current: z.object({
            model_id: z.string().nullable(),
            base_url: z.string().nullable(),
            vision: z
              .boolean()
              .nullable()
              .openapi({ description: 'Whether it accepts images; null when nobody can tell.' }),
          }),
          models: z.array(z.object({ id: z.string() })),
          providers: z.array(z.string()).openapi({
            description: 'The model profiles of the config, to name as `provider` in /api/models/select.',
          }),
          reachable: z.boolean(),
          error: z.string().optional(),
        }),
        'Models',
      ),
      ...refusals,
    },
  }),
  async (c, { hub }) => {
    const listed = await hub.runtimes.models();
    const current = hub.runtimes.currentModel;
    const sight = await hub.runtimes.vision({ workspace: hub.workspace, model: '' }).catch(() => undefined);
    return c.json(
      {
        current: {
          model_id: current.model ?? sight?.model ?? null,
          base_url: listed.baseUrl ?? null,
          vision: sight?.vision ?? null,
        },
        models: listed.models.map((id) => ({ id })),
        providers: hub.runtimes.providers,
        reachable: listed.error === undefined,
        ...(listed.error === undefined ? {} : { error: listed.error }),
      },
      200,
    );
  },
);

const selectModel = route(
  createRoute({
    method: 'post',
    path: '/api/models/select',
    tags: ['models'],
    summary: 'Switch the model (and optionally the server) for every later turn',
    request: {
      body: jsonBody(
        z.object({
          model_id: z.string().min(1),
          base_url: z
            .url({ protocol: /^https?$/ })
            .optional()
            .openapi({ description: 'An OpenAI-compatible base URL.' }),
          provider: z.string().min(1).optional().openapi({
            description:
              'A model profile of the config (`models`), e.g. `openrouter`: its base_url, api_key and sampling apply to later turns, with model_id as the model.',
          }),
        }),
      ),
    },
    responses: {
      200: json(
        z.object({
          status: z.literal('ok'),
          model_id: z.string(),
          provider: z.string().nullable(),
          base_url: z.string(),
          context_window: z.number().int(),
        }),
        'Switched',
      ),
      404: problemResponse('No configured provider of that name'),
      502: problemResponse('The model server could not be reached'),
      ...refusals,
    },
  }),
  async (c, { hub }) => {
    const { model_id, base_url, provider } = c.req.valid('json');
    const connection = await hub.runtimes.select(model_id, base_url, provider);
    return c.json(
      {
        status: 'ok' as const,
        model_id: connection.model,
        provider: provider ?? null,
        base_url: connection.baseUrl,
        context_window: connection.contextWindow,
      },
      200,
    );
  },
);

export const modelRouteList: readonly GatewayRoute[] = [listModels, selectModel];
