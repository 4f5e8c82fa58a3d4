import { request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_PASSWORD } from '../support/constants';
import { createTestApp, TestApp } from '../support/test-app';
import { logCapture } from '../support/log-capture';
import { waitFor } from '../support/wait-for';

/**
 * Structured logs (pino-http's completion line) carry the request id and never a password, token
 * or API key (CONTRACT §2, issue 2; issue #24 §3).
 */
describe('structured logs', () => {
  let t: TestApp;
  const { lines, sink } = logCapture();

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info' }, sink);
  });
  afterAll(async () => {
    await t.close();
  });

  it('logs each request as JSON with its request id, and no credentials', async () => {
    const u = await t.createUser();
    const key = (await t.req('post', '/api/v1/users/me/api-keys', u.token).send({ name: 'k' })).body.api_key as string;
    await t.req('get', '/api/v1/auth/me', key).set('X-Request-Id', 'log-check-1');
    await t.req('post', '/api/v1/auth/login').set('X-Request-Id', 'log-check-2').send({ username: u.username, password: 'wrong password!' });
    // A request's completion line is written when its response finishes, maybe after the client has it.
    const finished = (id: string) => lines.some((l) => l.includes(id) && l.includes('"request completed"'));
    await waitFor(() => finished('log-check-1') && finished('log-check-2'), { what: 'the completion lines' });

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = parsed.filter((l) => JSON.stringify(l).includes('log-check-1'));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine[0]).toMatchObject({ req_id: 'log-check-1', req: { method: 'GET', url: '/api/v1/auth/me' } });
    // pino-http's line carries no headers at all, and the key once.
    expect(Object.keys(mine[0].req as object).sort()).toEqual(['method', 'url']);
    expect(lines.find((l) => l.includes('log-check-1'))?.match(/"req_id"/g)).toHaveLength(1);
    expect(parsed.some((l) => JSON.stringify(l).includes('log-check-2'))).toBe(true);

    const all = lines.join('\n');
    for (const secret of [key, key.slice(17), u.token, DEFAULT_PASSWORD, 'wrong password!', t.adminToken]) {
      expect(all).not.toContain(secret);
    }
  });

  it('logs a request the client abandoned as aborted, once', async () => {
    const server = t.app.getHttpServer() as Server;
    const { port } = server.address() as AddressInfo;
    let received = false;
    const onRequest = (r: IncomingMessage) => {
      if (r.headers['x-request-id'] === 'log-abort-1') received = true;
    };
    server.on('request', onRequest);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/projects',
      headers: {
        authorization: `Bearer ${t.adminToken}`,
        'content-type': 'application/json',
        'content-length': '1000',
        'x-request-id': 'log-abort-1',
      },
    });
    req.on('error', () => undefined);
    req.write('{"name":');
    try {
      await waitFor(() => received, { what: 'the server to receive the request' });
    } finally {
      server.off('request', onRequest);
    }
    req.destroy();
    const mine = () => lines.filter((l) => l.includes('log-abort-1'));
    await waitFor(() => mine().length > 0, { what: 'the aborted line' });
    // Deliberate delay: "once" means no second line follows, and an absence cannot be polled for.
    await new Promise((r) => setTimeout(r, 100));
    expect(mine()).toHaveLength(1);
    expect(JSON.parse(mine()[0])).toMatchObject({
      level: 40,
      msg: 'request aborted',
      req_id: 'log-abort-1',
      req: { method: 'POST', url: '/api/v1/projects' },
    });
  });

  // A target in absolute form may carry userinfo (http://user:secret@host/...): the logged url is
  // the path alone, as the router reads it.
  it('logs the path of a target in absolute form, without scheme, host or userinfo', async () => {
    const { port } = (t.app.getHttpServer() as Server).address() as AddressInfo;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'GET',
          path: `http://someone:hunter2-secret@127.0.0.1:${port}/api/v1/auth/me?x=1`,
          headers: { authorization: `Bearer ${t.adminToken}`, 'x-request-id': 'log-absolute-1' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const mine = () => lines.filter((l) => l.includes('log-absolute-1'));
    await waitFor(() => mine().some((l) => l.includes('"request completed"')), {
      what: 'the completion line',
    });
    expect(JSON.parse(mine()[0])).toMatchObject({ req: { method: 'GET', url: '/api/v1/auth/me' } });
    expect(lines.join('\n')).not.toContain('hunter2-secret');
  });
});
