import { z } from '@hono/zod-openapi';

/**
 * The request and response shapes of the API. The routes validate with them and `GET /doc`
 * is generated from them: one definition for both.
 */

const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().openapi({ description: 'What went wrong and, where it can, what to do.' }),
  })
  .loose()
  .openapi('Problem');

const problemContent = { 'application/problem+json': { schema: Problem } };

/** The refusals every operation may answer with, besides its own. */
export const refusals = {
  400: { description: 'The request is invalid', content: problemContent },
  401: { description: 'No valid token or session cookie', content: problemContent },
  403: { description: 'A foreign Host or Origin', content: problemContent },
} as const;

export function problemResponse(description: string) {
  return { description, content: problemContent };
}

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T, required = true) {
  return { content: { 'application/json': { schema } }, required };
}

/** A session id a client may choose (the agent_computer API names sessions freely). */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const SessionId = z
  .string()
  .regex(SESSION_ID, 'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit')
  .openapi({ example: 'my-session' });

export const SessionParams = z.object({
  id: SessionId.openapi({ param: { name: 'id', in: 'path' } }),
});

export const Mode = z.enum(['bounded', 'deep_work']).openapi('Mode');

export const Usage = z
  .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
  .openapi('Usage');

export const Session = z
  .object({
    session_id: z.string(),
    id: z.string(),
    title: z.string(),
    preview: z.string(),
    workspace: z.string(),
    model: z.string(),
    status: z.string(),
    parent_id: z.string().nullable(),
    created_at: z.number().openapi({ description: 'Epoch milliseconds.' }),
    last_activity: z.number(),
    running: z.boolean(),
    queued: z.number().int(),
  })
  .loose()
  .openapi('Session');

export const TurnResult = z
  .object({
    session_id: z.string(),
    text: z.string(),
    response: z.string(),
    iterations: z.number().int(),
    model: z.string(),
    usage: Usage,
    mode: Mode,
    reason: z.string(),
  })
  .openapi('TurnResult');

export const Accepted = z
  .object({
    session_id: z.string(),
    status: z.enum(['running', 'queued', 'steered']),
    position: z.number().int().openapi({ description: 'Items ahead of this one; 0 when it runs now.' }),
  })
  .openapi('Accepted');

/** The image types vision models read; each as base64 of at most 5 MB decoded. */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
const MAX_IMAGE_BASE64 = Math.ceil((5 * 1024 * 1024 * 4) / 3) + 4;
export const MAX_IMAGES = 8;

export const ImageInput = z
  .object({
    mime_type: z.enum(IMAGE_TYPES),
    data: z
      .string()
      .min(1)
      .max(MAX_IMAGE_BASE64, 'an image may be at most 5 MB')
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64, without a data: prefix'),
  })
  .openapi('Image');
export type ImageInput = z.infer<typeof ImageInput>;

export const MessageBody = z
  .object({
    message: z.string().min(1),
    images: z
      .array(ImageInput)
      .max(MAX_IMAGES)
      .optional()
      .openapi({ description: 'Images for a vision model; refused (422) when the model cannot see.' }),
    mode: Mode.optional(),
    model: z.string().min(1).optional().openapi({ description: 'A model for this turn only.' }),
  })
  .openapi('Message');

export const Since = z.coerce
  .number()
  .int()
  .min(0)
  .optional()
  .openapi({ description: 'Replay the stored events after this seq first.' });

export const Todo = z.object({ id: z.string(), text: z.string(), status: z.string() }).openapi('Todo');
