/**
 * Runs one task and prints the answer as it streams, then what the agent did.
 *
 *   npm ci && node --import tsx examples/basic.ts [workspace]
 *
 * With no HEARTH_BASE_URL, local servers are probed (LM Studio, Ollama, llama.cpp, vLLM).
 * The workspace defaults to the current directory: the agent may write SUMMARY.md there.
 */
import { Agent } from 'hearth-agent';

const agent = new Agent({
  baseUrl: process.env.HEARTH_BASE_URL,
  model: process.env.HEARTH_MODEL,
  workspace: process.argv[2],
  // Asked before each change or command: here files may be written, commands may not run.
  approve: ({ call, summary }) => {
    const ok = call.name === 'write_file';
    console.error(`${ok ? 'approved' : 'declined'}: ${summary}`);
    return ok;
  },
});

try {
  const result = await agent.run('Read README.md and write a three-line summary of it to SUMMARY.md.', {
    onEvent: (event) => {
      if (event.type === 'text_delta') process.stdout.write(event.text);
      if (event.type === 'warning') console.error(`warning: ${event.message}`);
    },
  });
  console.log(`\n\n${result.reason} after ${result.turns} turn(s) in session ${result.sessionId}`);
  for (const { call, ok } of result.toolCalls) console.log(`${ok ? 'ok    ' : 'failed'} ${call.name}`);
  console.log(`tokens: ${result.usage.prompt} prompt, ${result.usage.completion} completion`);
} finally {
  await agent.close();
}
