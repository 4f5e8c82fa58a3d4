import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the test PostgreSQL that can stall: `stall()` stops forwarding in both
 * directions while every socket stays open and new connections are still accepted, which is what
 * the application sees of a server frozen with SIGSTOP (the kernel keeps the connections and queues
 * the bytes; nothing comes back). `resume()` forwards again, queued bytes included.
 */
export class StallProxy {
  private stalled = false;
  /** Bytes and closes held back while stalled, in order, replayed by resume(). */
  private held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();
  /** Connections the application opened, and those it closed itself while the proxy stalled. */
  readonly counts = { opened: 0, closedByAppWhileStalled: 0 };

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<StallProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no TCP port');
    const proxy = new StallProxy(server, address.port);
    server.on('connection', (client: Socket) => proxy.accept(client, target));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const replay of held) replay();
  }

  async close(): Promise<void> {
    this.resume();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Now, or at resume() while stalled. */
  private forward(action: () => void): void {
    if (this.stalled) this.held.push(action);
    else action();
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    this.counts.opened += 1;
    const upstream = connect(target.port, target.host);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(from);
      // Sockets keep being read while stalled (so a close by the application is seen at once); the
      // bytes wait in `held`, like in a frozen server's socket buffers.
      from.on('data', (chunk: Buffer) => this.forward(() => to.write(chunk)));
      from.on('error', () => undefined);
      from.on('close', () => {
        this.sockets.delete(from);
        if (from === client && this.stalled) this.counts.closedByAppWhileStalled += 1;
        this.forward(() => to.end());
      });
    }
  }
}
