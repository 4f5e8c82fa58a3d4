import { createTestApp, expectProblem, TestApp } from '../support/test-app';

/** Documentation pages as a browser meets them (issue #24 §4). */
describe('docs that read well', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves /favicon.ico as an icon', async () => {
    const res = await t
      .req('get', '/favicon.ico')
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('image/x-icon');
    const body = res.body as Buffer;
    expect([...body.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    const head = await t.req('head', '/favicon.ico');
    expect(head.status).toBe(200);
    expectProblem(await t.req('post', '/favicon.ico'), 405, 'method_not_allowed');
  });

  it('serves the error catalogue on its own page, linked from the document description', async () => {
    const page = await t.req('get', '/docs/errors');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<code>insufficient_project_role</code>');
    expect(page.text).toContain('<code>database_unavailable</code>');
    const doc = (await t.req('get', '/openapi.json')).body;
    expect(doc.info.description).toContain('](/docs/errors)');
    expect(doc.info.description).not.toContain('`insufficient_project_role` (403)');
  });

  // Found by an audit: /docs shares the dashboard's origin but could be framed, and Swagger UI kept
  // the credentials entered in localStorage after the tab was closed.
  it('the API explorer may not be framed and does not keep credentials beyond the tab', async () => {
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui-init.js', '/docs/errors']) {
      const res = await t.req('get', path).redirects(0);
      expect([path, res.headers['x-frame-options']]).toEqual([path, 'DENY']);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
    const init = await t.req('get', '/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*false/);
  });

  it('ReDoc loads nothing from another host: no absolute URL, and a policy that forbids it', async () => {
    const res = await t.req('get', '/redoc');
    expect(res.status).toBe(200);
    expect(res.text).not.toMatch(/https?:\/\//);
    const csp = String(res.headers['content-security-policy']);
    // ReDoc's sidebar logo would come from cdn.redoc.ly: images only from this server.
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
  });

  it('publishes servers, both security schemes and per-status problem examples', async () => {
    const doc = (await t.req('get', '/openapi.json')).body;
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.components.securitySchemes.api_key).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    );
    const op = doc.paths['/api/v1/test-runs/{id}'].get;
    expect(op.security).toEqual([{ bearer: [] }, { api_key: [] }]);
    for (const [status, response] of Object.entries(
      op.responses as Record<string, { content: Record<string, { examples: object }> }>,
    )) {
      if (Number(status) < 400) continue;
      const examples = Object.values(
        response.content['application/problem+json'].examples,
      ) as Array<{
        value: { status: number; code: string };
      }>;
      expect(examples.length).toBeGreaterThan(0);
      for (const e of examples) expect(e.value.status).toBe(Number(status));
    }
    const notFound = Object.values(
      op.responses['404'].content['application/problem+json'].examples,
    );
    expect(notFound).toEqual([
      expect.objectContaining({ value: expect.objectContaining({ code: 'test_run_not_found' }) }),
    ]);
  });

  it('an API key works as X-API-Key, as the document declares', async () => {
    const created = await t
      .req('post', '/api/v1/users/me/api-keys', t.adminToken)
      .send({ name: t.unique('docs') });
    expect(created.status).toBe(201);
    const me = await t.req('get', '/api/v1/auth/me').set('X-API-Key', created.body.api_key);
    expect(me.status).toBe(200);
    expect(me.body.username).toBe('admin');
  });
});
