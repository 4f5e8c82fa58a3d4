import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendWebhook } from './webhook-sender';

/** The sender against a real local server: timeouts, the kept body, and the pinned address. */
describe('sendWebhook', () => {
  let server: Server;
  let port = 0;
  const seen: Array<{ host: string | undefined; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        seen.push({ host: req.headers.host, body });
        if (req.url === '/hang') return; // never answers
        if (req.url === '/stall') {
          // Answers 200 and the first bytes of a body that never ends.
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('accepted');
          return;
        }
        if (req.url === '/big') {
          res.writeHead(200);
          res.end('z'.repeat(5000));
          return;
        }
        res.writeHead(204);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const options = { allowPrivate: true, timeoutMs: 2000, maxBodyBytes: 1024 };

  it('gives up after the timeout without an answer', async () => {
    const result = await sendWebhook(`http://127.0.0.1:${port}/hang`, {}, '{}', {
      ...options,
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ status: null, body: null, error: 'no answer within 200 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(150);
  });

  it('a 2xx whose body stalls past the timeout is the 2xx, with the body read so far', async () => {
    const result = await sendWebhook(`http://127.0.0.1:${port}/stall`, {}, '{}', {
      ...options,
      timeoutMs: 300,
    });
    expect(result).toMatchObject({ status: 200, body: 'accepted', error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(250);
  });

  it('fails the attempt when the resolver never answers within the timeout, without connecting', async () => {
    const before = seen.length;
    const result = await sendWebhook(`http://hanging.invalid:${port}/ok`, {}, '{}', {
      ...options,
      timeoutMs: 50,
      resolver: () => new Promise(() => undefined),
    });
    expect(result).toMatchObject({
      status: null,
      body: null,
      error: 'destination refused: the host hanging.invalid does not resolve (no answer within 50 ms)',
    });
    expect(seen).toHaveLength(before);
  }, 5000);

  it('gives the request what the lookup left of the attempt\'s time', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      // The resolver answers after 8 s of a 10 s attempt; the receiver never answers.
      const slowDns = () =>
        new Promise<Array<{ address: string; family: 4 }>>((resolve) =>
          setTimeout(() => resolve([{ address: '127.0.0.1', family: 4 }]), 8000),
        );
      const outcome = sendWebhook(`http://slow-dns.invalid:${port}/hang`, {}, '{}', {
        ...options,
        timeoutMs: 10_000,
        resolver: slowDns,
      });
      const settled = jest.fn();
      void outcome.then(settled);
      await jest.advanceTimersByTimeAsync(8000 + 1999);
      expect(settled).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      const result = await outcome;
      expect(result).toMatchObject({ status: null, error: 'no answer within 10000 ms' });
      expect(result.durationMs).toBe(10_000);
    } finally {
      jest.useRealTimers();
    }
  }, 5000);

  it('keeps only the first bytes of the answer', async () => {
    const result = await sendWebhook(`http://127.0.0.1:${port}/big`, {}, '{}', options);
    expect(result.status).toBe(200);
    expect(result.body).toBe('z'.repeat(1024));
  });

  it('connects to the address that was checked, whatever the name resolves to later', async () => {
    // `rebind.invalid` exists only for this resolver: the socket must use its answer.
    const result = await sendWebhook(`http://rebind.invalid:${port}/ok`, { 'x-a': '1' }, '{"a":1}', {
      ...options,
      resolver: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
    });
    expect(result).toMatchObject({ status: 204, error: null });
    expect(seen.at(-1)).toEqual({ host: `rebind.invalid:${port}`, body: '{"a":1}' });
  });

  it('refuses a private destination when they are not allowed, before connecting', async () => {
    const before = seen.length;
    const result = await sendWebhook(`http://127.0.0.1:${port}/ok`, {}, '{}', {
      ...options,
      allowPrivate: false,
    });
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^destination refused: .*loopback/);
    expect(seen).toHaveLength(before);
  });
});
