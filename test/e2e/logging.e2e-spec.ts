import { Writable } from 'node:stream';
import { DEFAULT_PASSWORD } from '../support/constants';
import { createTestApp, TestApp } from '../support/test-app';

/** Structured logs carry the request id and never a password, token or API key (CONTRACT §2, issue 2). */
describe('structured logs', () => {
  let t: TestApp;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });

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
    await new Promise((r) => setTimeout(r, 50));

    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = parsed.filter((l) => JSON.stringify(l).includes('log-check-1'));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine[0]).toMatchObject({ req: { request_id: 'log-check-1', method: 'GET', url: '/api/v1/auth/me' } });
    expect(parsed.some((l) => JSON.stringify(l).includes('log-check-2'))).toBe(true);

    const all = lines.join('\n');
    for (const secret of [key, key.slice(17), u.token, DEFAULT_PASSWORD, 'wrong password!', t.adminToken]) {
      expect(all).not.toContain(secret);
    }
  });
});
