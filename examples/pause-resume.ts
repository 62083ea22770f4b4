/**
 * Approval without a callback: the run pauses with the calls it wants to make, and a later
 * process (after a restart, say) approves some of them and continues.
 *
 *   node --import tsx examples/pause-resume.ts run [workspace]
 *   node --import tsx examples/pause-resume.ts resume SESSION_ID [CALL_ID ...]
 *
 * The session, with its pending calls, is kept in ~/.hearth/hearth.db (HEARTH_HOME moves it).
 */
import { Agent, type AgentResult } from 'hearth-agent';

const [command, ...rest] = process.argv.slice(2);
const connection = { baseUrl: process.env.HEARTH_BASE_URL, model: process.env.HEARTH_MODEL };

function report(result: AgentResult): void {
  if (!result.paused) {
    console.log(`${result.reason}: ${result.text}`);
    return;
  }
  console.log(`paused: session ${result.sessionId} waits for approval of`);
  for (const call of result.pending) console.log(`  ${call.id} ${call.name} ${call.arguments}`);
  const ids = result.pending.map((call) => call.id).join(' ');
  console.log(`approve with: node --import tsx examples/pause-resume.ts resume ${result.sessionId} ${ids}`);
}

if (command === 'run') {
  const agent = new Agent({ ...connection, workspace: rest[0] });
  try {
    report(await agent.run('Create hello.txt saying hello, and notes.txt with a short note.'));
  } finally {
    await agent.close();
  }
} else if (command === 'resume' && rest[0]) {
  // The workspace, the history and the pending calls all come from the stored session.
  const agent = new Agent({ ...connection, sessionId: rest[0] });
  try {
    report(await agent.resume({ approved: rest.slice(1), reason: 'not approved this time' }));
  } finally {
    await agent.close();
  }
} else {
  console.error('usage: pause-resume.ts run [workspace] | resume SESSION_ID [CALL_ID ...]');
  process.exitCode = 2;
}
