import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay in front of a server, for tests of dropped connections: `cut()` destroys every
 * relayed connection and refuses new ones (as a network outage does) until `restore()`.
 */
export interface TcpProxy {
  url: string;
  /** Connections relayed so far. */
  readonly connections: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let connections = 0;
  const server = createServer((client) => {
    if (down) return client.destroy();
    connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    async close() {
      this.cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
