import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

/**
 * Every operation /doc listed before the routes became one constant each, as
 * "METHOD path operationId statuses" (operationId "-" when there is none). A route dropped, added,
 * moved or given other answers changes this list: update it on purpose, never by accident.
 */
const OPERATIONS = [
  'DELETE /api/memory/{id} - 200,400,401,403,404',
  'DELETE /api/sessions/{id} - 200,400,401,403,404,409',
  'GET /api/activity - 200,400,401,403',
  'GET /api/cron - 200,400,401,403',
  'GET /api/cron/{id}/runs - 200,400,401,403,404',
  'GET /api/evals - 200,400,401,403',
  'GET /api/evals/{id} - 200,400,401,403,404',
  'GET /api/events - 200,400,401,403',
  'GET /api/health - 200,400,401,403',
  'GET /api/inbox - 200,400,401,403',
  'GET /api/memory - 200,400,401,403',
  'GET /api/memory/export - 200,400,401,403',
  'GET /api/memory/proposals - 200,400,401,403',
  'GET /api/memory/search - 200,400,401,403',
  'GET /api/models - 200,400,401,403',
  'GET /api/pipeline - 200,400,401,403',
  'GET /api/pipeline/events - 200,400,401,403',
  'GET /api/projects - 200,400,401,403',
  'GET /api/sessions - 200,400,401,403',
  'GET /api/sessions/{id} - 200,400,401,403,404',
  'GET /api/sessions/{id}/events - 200,400,401,403,404',
  'GET /api/sessions/{id}/files - 200,400,401,403,404',
  'GET /api/sessions/{id}/files/content - 200,400,401,403,404,415',
  'GET /api/sessions/{id}/history - 200,400,401,403,404',
  'GET /api/sessions/{id}/tasks - 200,400,401,403,404',
  'GET /api/sessions/{id}/todos - 200,400,401,403,404',
  'GET /api/sessions/{id}/turns - 200,400,401,403,404',
  'GET /api/status - 200,400,401,403',
  'GET /api/usage - 200,400,401,403',
  'GET /ws/activity - 101,400,401,403,426',
  'GET /ws/{session} - 101,400,401,403,426',
  'PATCH /api/memory/proposals/{id} - 200,400,401,403,404,409',
  'POST /api/auth/login - 200,400,401,403,429',
  'POST /api/auth/logout - 200,400,401,403',
  'POST /api/chat/{session} - 200,400,401,403,422,502',
  'POST /api/cron/reload - 200,400,401,403',
  'POST /api/cron/{id}/run - 200,202,400,401,403,404',
  'POST /api/cron/{id}/toggle - 200,400,401,403,404',
  'POST /api/inbox - 202,400,401,403',
  'POST /api/memory - 200,201,400,401,403',
  'POST /api/memory/proposals/{id}/accept - 200,400,401,403,404,409',
  'POST /api/memory/proposals/{id}/reject - 200,400,401,403,404,409',
  'POST /api/models/select - 200,400,401,403,404,502',
  'POST /api/pipeline/pause - 200,400,401,403',
  'POST /api/pipeline/resume - 200,400,401,403',
  'POST /api/sessions - 201,400,401,403,409',
  'POST /api/sessions/{id}/abort - 200,400,401,403,404',
  'POST /api/sessions/{id}/approvals/{callId} - 200,400,401,403,404,409',
  'POST /api/sessions/{id}/compact - 200,400,401,403,404,502',
  'POST /api/sessions/{id}/fork - 201,400,401,403,404',
  'POST /api/sessions/{id}/messages - 202,400,401,403,404,422',
  'POST /api/sessions/{id}/mode - 200,400,401,403,404',
  'POST /api/sessions/{id}/rewind - 200,400,401,403,404,409',
];

/** The named schemas under components.schemas. */
const SCHEMAS = [
  'Accepted',
  'EvalModelSummary',
  'EvalResult',
  'EvalRun',
  'Image',
  'Job',
  'JobRun',
  'Memory',
  'MemoryProposal',
  'Message',
  'Mode',
  'PipelineEvent',
  'PipelinePlan',
  'PipelineStatus',
  'Problem',
  'Session',
  'Todo',
  'TurnResult',
  'Usage',
];

interface Document {
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, unknown> };
}

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

describe('the OpenAPI document at /doc', () => {
  it('lists every operation, with its answers, and every named schema', async () => {
    gw = await startGateway([]);
    const doc = await gw.json<Document>('/doc');
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, op]) =>
          `${method.toUpperCase()} ${path} ${op.operationId ?? '-'} ${Object.keys(op.responses).join(',')}`,
      ),
    );
    expect(operations.sort()).toEqual(OPERATIONS);
    expect(Object.keys(doc.components.schemas).sort()).toEqual(SCHEMAS);
  });
});
