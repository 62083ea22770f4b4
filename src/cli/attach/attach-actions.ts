import { resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { colorEnabled, makeStyle, oneLine, type Style } from '../render.js';
import { visible } from '../sanitize.js';
import { UsageError } from '../usage-error.js';
import { AttachView } from './attach-view.js';
import {
  type AddressFlags,
  describeRefusal,
  GatewayClient,
  GatewayRequestError,
  locateGateway,
  type SessionDetail,
} from './gateway-client.js';
import { LineSource } from './line-source.js';
import { SessionStream } from './session-stream.js';

export interface AttachFlags extends AddressFlags {
  /** Start a new session (its id the SESSION argument, when given). */
  new?: boolean;
  /** false (--no-history): show only what happens from now on. */
  history?: boolean;
  workspace?: string;
}

const HELP = `/abort stops the running turn · /steer TEXT adds to it · /quit leaves (the session goes on)`;

/**
 * `hearth attach`: a terminal client of a running gateway. It finds the gateway, picks or makes the
 * session, then streams its events (SessionStream, reconnecting by itself) into the view while lines
 * typed or piped in become messages. Piped input is taken line by line, each message waiting for its
 * turn to end, so a script reads like a conversation; at a terminal, a message typed while the
 * session works is queued by the gateway, which says where.
 */
export async function runAttach(sessionArg: string | undefined, flags: AttachFlags): Promise<number> {
  const { env, stdin, stdout, stderr } = process;
  const client = new GatewayClient(await locateGateway(flags, env));
  await client.check();
  const style = makeStyle(colorEnabled(stderr, env));
  const tty = stdin.isTTY === true;
  const lines = new LineSource();
  const rl = createInterface({ input: stdin, output: tty ? stdout : undefined, terminal: tty });
  rl.on('line', (line) => lines.push(line));
  rl.on('close', () => lines.end());
  // Ctrl+C before the session is chosen: no session, nothing to stop.
  rl.on('SIGINT', () => lines.end());
  try {
    const detail = await chooseSession(client, sessionArg, flags, { tty, lines, style, rl });
    return await attach(client, detail, flags, { tty, lines, style, rl });
  } finally {
    rl.close();
  }
}

interface Terminal {
  tty: boolean;
  lines: LineSource;
  style: Style;
  rl: Interface;
}

async function chooseSession(
  client: GatewayClient,
  id: string | undefined,
  flags: AttachFlags,
  { tty, lines, style, rl }: Terminal,
): Promise<SessionDetail> {
  const open = (sessionId: string) =>
    client.session(sessionId).catch((err: unknown) => {
      if (err instanceof GatewayRequestError && err.status === 404)
        throw new UsageError(
          `No session ${sessionId} on the gateway. Start it with: hearth attach --new ${sessionId}`,
        );
      throw new UsageError(describeRefusal(err, client.address.url));
    });
  const create = async (sessionId?: string) => {
    const workspace = resolve(flags.workspace ?? '.');
    const row = await client.create({ ...(sessionId ? { id: sessionId } : {}), workspace }).catch((err) => {
      throw new UsageError(describeRefusal(err, client.address.url));
    });
    return open(row.id);
  };
  if (flags.new) return create(id);
  if (id !== undefined) return open(id);
  const { sessions } = await client.sessions();
  if (!tty) {
    const known = sessions.slice(0, 5).map((s) => s.id);
    throw new UsageError(
      `Name the session to attach to, or start one with --new${known.length ? ` (recent: ${known.join(', ')})` : ''}. The list: hearth attach, at a terminal.`,
    );
  }
  const err = process.stderr;
  if (sessions.length === 0) {
    err.write(style.dim('No sessions yet; starting a new one.\n'));
    return create();
  }
  err.write(`Sessions on ${client.address.url}:\n`);
  sessions.forEach((s, i) => {
    const state = s.running ? style.yellow(' running') : '';
    const when = new Date(s.last_activity).toLocaleString();
    err.write(
      `  ${style.cyan(String(i + 1).padStart(2))}  ${oneLine(s.id, 24)}  ${oneLine(s.title || '(untitled)', 48)}  ${style.dim(when)}${state}\n`,
    );
  });
  for (;;) {
    rl.setPrompt('Attach to (number or id; Enter for a new session): ');
    rl.prompt();
    const answer = await lines.next();
    if (answer === undefined) throw new UsageError('No session chosen.');
    const choice = answer.trim();
    if (choice === '') return create();
    const picked = sessions[Number(choice) - 1]?.id ?? sessions.find((s) => s.id === choice)?.id;
    if (picked) return open(picked);
    err.write(style.yellow(`No session ${visible(choice)} in the list.\n`));
  }
}

async function attach(
  client: GatewayClient,
  detail: SessionDetail,
  flags: AttachFlags,
  { tty, lines, style, rl }: Terminal,
): Promise<number> {
  const { stdout, stderr } = process;
  const id = detail.id;
  let promptShown = false;
  /** At a terminal, what the session prints goes above the prompt line, not into it. */
  const clearPrompt = () => {
    if (!promptShown) return;
    promptShown = false;
    stdout.write('\r\x1b[2K');
  };
  const showPrompt = () => {
    if (!tty || view.busy) return;
    rl.setPrompt('› ');
    rl.prompt(true);
    promptShown = true;
  };
  const guard = (stream: NodeJS.WriteStream): NodeJS.WritableStream =>
    ({
      write: (text: string) => {
        clearPrompt();
        return stream.write(text);
      },
    }) as NodeJS.WritableStream;
  const view = new AttachView(
    id,
    client,
    {
      out: guard(stdout),
      err: guard(stderr),
      style,
      answerOnly: !stdout.isTTY,
      answer: (question, signal) => {
        if (tty) {
          rl.setPrompt(question);
          rl.prompt();
        } else stderr.write(question);
        return lines.answer(signal);
      },
      ...(tty ? { choose: (question, keys, signal) => pressKey(rl, question, keys, signal) } : {}),
    },
    !tty,
    () => queueMicrotask(showPrompt),
  );

  let left: ((code: number) => void) | undefined;
  const leave = new Promise<number>((done) => {
    left = done;
  });
  let connectedOnce: () => void = () => {};
  const ready = new Promise<void>((done) => {
    connectedOnce = done;
  });
  const history = flags.history !== false;
  const stream = new SessionStream(
    id,
    async () => {
      // A restarted gateway may have a new port and token: look again each time.
      if (!flags.url || !flags.token) client.address = await locateGateway(flags, process.env);
      return client.address;
    },
    {
      event: (event) => void view.take(event),
      connected: (hello, again) => {
        view.connected(hello);
        if (again) view.line(style.dim('Reconnected.'));
        // The session so far is shown before anything is read from the user.
        else void view.caughtUp(hello, stream.seq).then(connectedOnce);
        showPrompt();
      },
      lost: (why) => view.line(style.yellow(`Connection lost (${visible(why)}); reconnecting…`)),
      failed: (why) => {
        view.line(style.red(`Disconnected: ${visible(why)}.`));
        view.release();
        left?.(1);
      },
    },
    history ? 0 : detail.last_seq,
  );

  view.line(
    style.dim(
      `Attached to ${visible(id)}${detail.title ? ` (${oneLine(detail.title, 60)})` : ''} at ${client.address.url}. ` +
        (tty ? 'Ctrl+C stops a turn (twice: leave), Ctrl+D leaves; /help.' : ''),
    ),
  );
  // Without the history, turns run in the terminal before now are not shown either.
  if (!history) view.skipStored((await client.history(id)).messages.length);
  stream.start();
  await Promise.race([ready, leave]);

  let stopping = false;
  const interrupt = () => {
    if (view.busy && !stopping) {
      stopping = true;
      view.line(style.yellow('Stopping the turn… (Ctrl+C again leaves)'));
      client
        .abort(id)
        .catch((err: unknown) => view.line(style.red(describeRefusal(err, client.address.url))));
      return;
    }
    left?.(130);
  };
  rl.removeAllListeners('SIGINT');
  if (tty) rl.on('SIGINT', interrupt);
  else process.on('SIGINT', interrupt);

  const send = async (text: string) => {
    for (;;) {
      try {
        view.sentMessage(text);
        const reply = await client.send(id, text);
        if (reply.position > 0) view.line(style.dim(`queued (position ${reply.position})`));
        return true;
      } catch (err) {
        view.forget(text);
        // The gateway is away (restarting): wait for the stream to find it again, then resend.
        if (err instanceof GatewayRequestError && err.status === 0 && !streamGone) {
          await new Promise((wait) => setTimeout(wait, 500));
          continue;
        }
        view.line(style.red(`Not sent: ${visible(describeRefusal(err, client.address.url))}`));
        return false;
      }
    }
  };
  let streamGone = false;

  const readLoop = async (): Promise<number> => {
    for (;;) {
      const line = await lines.next();
      if (line === undefined) {
        // End of input: at a terminal the user left; from a script, its messages are answered first.
        if (!tty) await view.ownWorkDone();
        return exitCode(view);
      }
      const text = line.trim();
      if (text === '') {
        showPrompt();
        continue;
      }
      if (text === '/quit' || text === '/exit') return 0;
      if (text === '/help') {
        view.line(style.dim(HELP));
        showPrompt();
        continue;
      }
      if (text === '/abort') {
        if (!(await client.abort(id)).aborted) view.line(style.dim('Nothing is running.'));
        continue;
      }
      if (text.startsWith('/steer ')) {
        const reply = await client.send(id, text.slice(7), true);
        if (reply.status !== 'steered') view.line(style.dim('Nothing was running; sent as a message.'));
        continue;
      }
      stopping = false;
      if (await send(line)) {
        if (!tty) await view.ownWorkDone();
      }
    }
  };
  try {
    return await Promise.race([readLoop(), leave]);
  } finally {
    streamGone = true;
    stream.close();
    view.release();
    process.off('SIGINT', interrupt);
    if (tty && view.busy) stderr.write(style.dim(`\nLeft ${id}; it goes on in the gateway.\n`));
  }
}

/**
 * One key at the terminal, while readline keeps the keyboard: the key readline has just put into
 * its line is taken back out (Ctrl+U), so it is not sent later as a message.
 */
function pressKey(
  rl: Interface,
  question: string,
  keys: readonly string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  const input = process.stdin;
  rl.setPrompt(question);
  rl.prompt();
  return new Promise((resolve) => {
    const finish = (key: string | undefined) => {
      input.off('keypress', onKey);
      signal.removeEventListener('abort', onAbort);
      rl.write(null, { ctrl: true, name: 'u' });
      process.stdout.write(`${key ?? ''}\n`);
      resolve(key);
    };
    const onKey = (text: string | undefined) => {
      const key = text?.toLowerCase();
      if (key !== undefined && keys.includes(key)) setImmediate(() => finish(key));
    };
    const onAbort = () => finish(undefined);
    if (signal.aborted) return finish(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    input.on('keypress', onKey);
  });
}

function exitCode(view: AttachView): number {
  const reason = view.lastOwnReason;
  if (reason === undefined || reason === 'completed') return 0;
  if (reason === 'aborted') return 130;
  if (reason === 'error' || reason === 'blocked') return 1;
  return 2;
}
