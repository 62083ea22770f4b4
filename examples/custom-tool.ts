/**
 * Gives the agent a tool of your own and prints every event of the run.
 *
 *   npm ci && node --import tsx examples/custom-tool.ts [workspace]
 */
import { Agent, defineTool, z } from 'hearth-agent';

/** Stands in for your own system: a database, an API, a device. */
const orders = new Map([
  [1042, { status: 'shipped', carrier: 'DHL', eta: '2025-03-07' }],
  [1043, { status: 'packing' }],
]);

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Status of a customer order, by order number.',
  parameters: z.object({ order: z.number().int().describe('the order number, e.g. 1042') }),
  // Read-only: it never needs approval.
  mutates: false,
  async run({ order }) {
    const found = orders.get(order);
    // What the model reads: short, and saying how to do better on a miss.
    if (!found) return `No order ${order}. Known orders: ${[...orders.keys()].join(', ')}.`;
    return JSON.stringify(found);
  },
});

const agent = new Agent({
  baseUrl: process.env.HEARTH_BASE_URL,
  model: process.env.HEARTH_MODEL,
  workspace: process.argv[2],
  // Names pick built-in tools; objects add your own.
  tools: ['read_file', lookupOrder],
});

try {
  for await (const event of agent.stream('Where is order 1042, and when will it arrive?')) {
    switch (event.type) {
      case 'text_delta':
        process.stdout.write(event.text);
        break;
      case 'tool_call':
        console.log(`-> ${event.call.name} ${event.call.arguments}`);
        break;
      case 'tool_result':
        console.log(`<- ${event.ok ? 'ok' : 'error'}: ${event.output}`);
        break;
      case 'done':
        console.log(`\n[${event.reason}]`);
        break;
    }
  }
} finally {
  await agent.close();
}
