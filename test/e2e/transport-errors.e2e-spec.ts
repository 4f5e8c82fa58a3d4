import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { installClientErrorHandler } from '../../src/common/http/client-errors';
import { maxBodyBytes } from '../../src/modules/imports/upload';
import { fixture } from '../support/import-fixture';
import { TEST_ADMIN } from '../support/constants';
import { createTestApp, expectProblem, RoleFixture, TestApp } from '../support/test-app';

/** A raw HTTP exchange: writes `bytes`, reads until the server closes the connection. */
function rawExchange(port: number, bytes: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(bytes);
  });
}

/** Status line, headers (lower-case names) and parsed JSON body of a raw response. */
function parseRaw(raw: string): { statusLine: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const end = raw.indexOf('\r\n\r\n');
  expect(end).toBeGreaterThan(0);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const text = raw.slice(end + 4);
  expect(Buffer.byteLength(text)).toBe(Number(headers['content-length']));
  return { statusLine, headers, body: JSON.parse(text) as Record<string, unknown> };
}

/** Asserts a raw problem response (CONTRACT §3 body, the connection closed after it). */
function expectRawProblem(raw: string, status: number, code: string): Record<string, unknown> {
  const { statusLine, headers, body } = parseRaw(raw);
  expect(statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(headers.connection).toBe('close');
  expect(body).toMatchObject({ status, code, type: expect.stringMatching(new RegExp(`/${code}$`)) });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(typeof body.instance).toBe('string');
  expect(body.request_id).toBe(headers['x-request-id']);
  expect(body).not.toHaveProperty('errors');
  return body;
}

const LOGIN = JSON.stringify({ username: TEST_ADMIN.username, password: TEST_ADMIN.password });

/** A multipart/form-data body with one `file` part (and optional bytes before the first boundary). */
function multipart(file: Buffer, preamble: Buffer = Buffer.alloc(0)): { type: string; body: Buffer } {
  const boundary = 'transport-errors-boundary';
  const body = Buffer.concat([
    preamble,
    Buffer.from(
      `${preamble.length > 0 ? '\r\n' : ''}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="report.xml"\r\n` +
        'Content-Type: application/xml\r\n\r\n',
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { type: `multipart/form-data; boundary=${boundary}`, body };
}

describe('transport errors: Content-Encoding and requests Node refuses', () => {
  let t: TestApp;
  let f: RoleFixture;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    port = (t.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  const projectCount = async (): Promise<number> =>
    Number((await t.db.query(`SELECT count(*)::int AS n FROM projects`))[0].n);

  function postRaw(url: string, body: Buffer, encoding: string, token?: string, type = 'application/json') {
    // serialize: superagent would turn a Buffer sent as application/json into JSON text.
    return t
      .req('post', url, token)
      .set('Content-Type', type)
      .set('Content-Encoding', encoding)
      .serialize((b: unknown) => b as string)
      .send(body);
  }

  describe('Content-Encoding on JSON bodies', () => {
    const plain = Buffer.from(LOGIN);

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
      ['GZip', gzipSync],
      ['identity', (b: Buffer) => b],
    ])('a valid %s body is decoded (login works)', async (encoding, encode) => {
      const res = await postRaw('/api/v1/auth/login', encode(plain), encoding);
      expect(res.status).toBe(200);
      expect(typeof res.body.access_token).toBe('string');
    });

    it.each([
      ['gzip over an uncompressed body', 'gzip', plain],
      ['deflate over an uncompressed body', 'deflate', plain],
      ['br over an uncompressed body', 'br', plain],
      ['a truncated gzip body', 'gzip', gzipSync(plain).subarray(0, 20)],
      ['a gzip body declared as deflate', 'deflate', gzipSync(plain)],
      ['a corrupt gzip body', 'gzip', Buffer.concat([gzipSync(plain).subarray(0, 10), Buffer.alloc(40, 0xff)])],
    ])('%s: 400 invalid_content_encoding on a public endpoint', async (_name, encoding, body) => {
      const res = await postRaw('/api/v1/auth/login', body, encoding);
      const problem = expectProblem(res, 400, 'invalid_content_encoding');
      expect(problem.instance).toBe('/api/v1/auth/login');
      expect(problem.detail).toContain(encoding);
    });

    it('an authenticated endpoint answers 401 first, then 400; nothing is stored', async () => {
      const body = Buffer.from(JSON.stringify({ name: t.unique('enc') }));
      const before = await projectCount();
      expectProblem(await postRaw('/api/v1/projects', body, 'gzip'), 401, 'unauthorized');
      expectProblem(await postRaw('/api/v1/projects', body, 'gzip', f.lead.token), 400, 'invalid_content_encoding');
      expectProblem(
        await postRaw('/api/v1/projects', gzipSync(body).subarray(0, 15), 'gzip', f.lead.token),
        400,
        'invalid_content_encoding',
      );
      expect(await projectCount()).toBe(before);
      const created = await postRaw('/api/v1/projects', gzipSync(body), 'gzip', f.lead.token);
      expect(created.status).toBe(201);
      expect(await projectCount()).toBe(before + 1);
    });

    it.each(['compress', 'zstd', 'x-gzip', 'identity, gzip', 'gzip, br', 'gzip;q=1', 'chunked'])(
      'Content-Encoding "%s" is 415 unsupported_content_encoding (after 401)',
      async (encoding) => {
        const body = Buffer.from(JSON.stringify({ name: t.unique('enc') }));
        const before = await projectCount();
        expectProblem(await postRaw('/api/v1/projects', body, encoding), 401, 'unauthorized');
        const res = await postRaw('/api/v1/projects', body, encoding, f.lead.token);
        expectProblem(res, 415, 'unsupported_content_encoding');
        expect(await projectCount()).toBe(before);
        expectProblem(await postRaw('/api/v1/auth/login', plain, encoding), 415, 'unsupported_content_encoding');
      },
    );

    it('a wrong media type is reported before the encoding (415 unsupported_media_type)', async () => {
      const res = await postRaw('/api/v1/auth/login', plain, 'zstd', undefined, 'text/plain');
      expectProblem(res, 415, 'unsupported_media_type');
    });

    it('the JSON size limit applies to the decoded body: a decompression bomb is 413', async () => {
      const limit = t.config.maxJsonBytes;
      // A valid JSON document just over the limit once inflated, a few kilobytes compressed.
      const big = Buffer.from(JSON.stringify({ name: 'bomb', description: 'a'.repeat(limit) }));
      const bomb = gzipSync(big, { level: 9 });
      expect(bomb.length).toBeLessThan(limit / 100);
      expectProblem(await postRaw('/api/v1/projects', bomb, 'gzip', f.lead.token), 413, 'payload_too_large');
      expectProblem(
        await postRaw('/api/v1/projects', brotliCompressSync(big), 'br', f.lead.token),
        413,
        'payload_too_large',
      );
      // Under the limit once inflated, the same shape is read (and then judged on its fields).
      const fits = Buffer.from(JSON.stringify({ name: 'x', description: 'a'.repeat(limit - 1000) }));
      const res = await postRaw('/api/v1/projects', gzipSync(fits), 'gzip', f.lead.token);
      expectProblem(res, 422, 'validation_error');
      expect(Object.keys(res.body.errors as object)).toEqual(['description']);
    });

    it('a body-less request may carry any Content-Encoding', async () => {
      const res = await t.req('get', '/api/v1/auth/me', f.lead.token).set('Content-Encoding', 'zstd');
      expect(res.status).toBe(200);
    });
  });

  describe('Content-Encoding on multipart uploads', () => {
    let runId: string;
    const report = fixture('basic.xml');

    beforeAll(async () => {
      const res = await t
        .req('post', '/api/v1/test-runs', f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Run ') });
      expect(res.status).toBe(201);
      runId = res.body.id as string;
    });

    const importCount = async (): Promise<number> =>
      Number(
        (await t.db.query(`SELECT count(*)::int AS n FROM junit_imports WHERE project_id = $1`, [f.projectId]))[0].n,
      );

    function upload(url: string, body: Buffer, type: string, encoding: string, token?: string) {
      return t.req('post', url, token).set('Content-Type', type).set('Content-Encoding', encoding).send(body);
    }

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ])('a %s-encoded upload is decoded and imported', async (encoding, encode) => {
      const { type, body } = multipart(report);
      const plain = await t
        .req('post', `/api/v1/test-runs/${runId}/imports/junit?dry_run=true`, f.tester.token)
        .set('Content-Type', type)
        .send(body);
      expect(plain.status).toBe(201);
      const res = await upload(
        `/api/v1/test-runs/${runId}/imports/junit?dry_run=true`,
        encode(body),
        type,
        encoding,
        f.tester.token,
      );
      expect(res.status).toBe(201);
      expect(res.body.summary).toEqual(plain.body.summary);
      expect(res.body.sha256).toEqual(plain.body.sha256);
      const project = await upload(
        `/api/v1/projects/${f.projectId}/imports/junit?dry_run=true`,
        encode(body),
        type,
        encoding,
        f.tester.token,
      );
      expect(project.status).toBe(201);
      expect(project.body.summary).toEqual(plain.body.summary);
    });

    it.each([
      ['gzip over an uncompressed body', 'gzip', (b: Buffer) => b],
      ['br over an uncompressed body', 'br', (b: Buffer) => b],
      ['a truncated gzip body', 'gzip', (b: Buffer) => gzipSync(b).subarray(0, Math.floor(gzipSync(b).length / 2))],
    ])('%s: 401 without a credential, then 400; nothing is imported', async (_name, encoding, encode) => {
      const { type, body } = multipart(report);
      const before = await importCount();
      for (const url of [`/api/v1/test-runs/${runId}/imports/junit`, `/api/v1/projects/${f.projectId}/imports/junit`]) {
        expectProblem(await upload(url, encode(body), type, encoding), 401, 'unauthorized');
        const res = await upload(url, encode(body), type, encoding, f.tester.token);
        expectProblem(res, 400, 'invalid_content_encoding');
      }
      expect(await importCount()).toBe(before);
    });

    it('an unsupported coding is 415 unsupported_content_encoding', async () => {
      const { type, body } = multipart(report);
      const res = await upload(`/api/v1/test-runs/${runId}/imports/junit`, body, type, 'compress', f.tester.token);
      expectProblem(res, 415, 'unsupported_content_encoding');
    });

    it('the decoded body is bounded: a bomb outside the file part is 413', async () => {
      // Bytes before the first boundary are ignored by the multipart parser, so only the bound on
      // the decoded body (MAX_UPLOAD_BYTES plus the multipart framing of MAX_UPLOAD_FILES parts)
      // refuses them.
      const bound = maxBodyBytes({ maxBytes: t.config.maxUploadBytes, maxFiles: t.config.maxUploadFiles });
      const padding = Buffer.alloc(bound + 1, 0x20);
      const { type, body } = multipart(report, padding);
      const bomb = gzipSync(body, { level: 9 });
      expect(bomb.length).toBeLessThan(body.length / 100);
      const before = await importCount();
      const res = await upload(`/api/v1/test-runs/${runId}/imports/junit`, bomb, type, 'gzip', f.tester.token);
      expectProblem(res, 413, 'payload_too_large');
      expect(await importCount()).toBe(before);
    });
  });

  describe("requests Node's HTTP parser refuses", () => {
    it('a 20 KB header is 431 with a problem body', async () => {
      const raw = await rawExchange(
        port,
        `GET /api/v1/auth/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
      );
      const body = expectRawProblem(raw, 431, 'request_header_fields_too_large');
      expect(body.title).toBe('Request header fields too large');
    });

    it.each([
      ['a garbage request line', 'GARBAGE\r\n\r\n'],
      ['an unknown method', 'FROB /api/v1/auth/me HTTP/1.1\r\nHost: x\r\n\r\n'],
      ['a header without a colon', 'GET /api/v1/auth/me HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n'],
      ['an invalid chunk size', 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
      ['both Content-Length and chunked', 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ])('%s is 400 bad_request with a problem body', async (_name, request) => {
      expectRawProblem(await rawExchange(port, request), 400, 'bad_request');
    });

    it('an unsupported Expect is 417 expectation_failed with a problem body', async () => {
      const raw = await rawExchange(
        port,
        'POST /api/v1/auth/login?x=1 HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nX-Request-Id: rid-417\r\nContent-Length: 0\r\n\r\n',
      );
      const body = expectRawProblem(raw, 417, 'expectation_failed');
      expect(body.instance).toBe('/api/v1/auth/login');
      expect(body.request_id).toBe('rid-417');
    });

    it('CONNECT is 405 method_not_allowed with a problem body (Node closed the connection silently)', async () => {
      const raw = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expectRawProblem(raw, 405, 'method_not_allowed');
    });

    it('an HTTP/2 connection preface is 400 bad_request', async () => {
      expectRawProblem(await rawExchange(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 400, 'bad_request');
    });

    it('a malformed request after an answered one on the same connection gets its own answer', async () => {
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let text = '';
        let sent = false;
        socket.on('data', (c: Buffer) => {
          text += c.toString('utf8');
          const end = text.indexOf('\r\n\r\n');
          const length = /content-length: *(\d+)/i.exec(text)?.[1];
          // Once the first answer is complete (the connection is kept alive), send garbage on it.
          if (!sent && end > 0 && length !== undefined && Buffer.byteLength(text) >= end + 4 + Number(length)) {
            sent = true;
            socket.write('GARBAGE\r\n\r\n');
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(raw.startsWith('HTTP/1.1 200 ')).toBe(true);
      const second = raw.indexOf('HTTP/1.1 400 ');
      expect(second).toBeGreaterThan(0);
      expectRawProblem(raw.slice(second), 400, 'bad_request');
    });

    it('the service still answers normally afterwards', async () => {
      const res = await t.req('get', '/api/v1/auth/me', f.lead.token);
      expect(res.status).toBe(200);
    });
  });

  describe('the clientError handler on a bare server (timeouts)', () => {
    let server: Server;
    let barePort: number;

    beforeAll(async () => {
      server = createServer(
        // The handler never answers a request whose body does not come: the request times out.
        { requestTimeout: 300, headersTimeout: 200, connectionsCheckingInterval: 50 },
        (req, res) => {
          req.resume();
          req.on('end', () => res.end('ok'));
        },
      );
      installClientErrorHandler(server, { errorBaseUrl: 'https://errors.test', logger: pino({ level: 'silent' }) });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      barePort = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('headers not received in time: 408 request_timeout with a problem body', async () => {
      const body = expectRawProblem(await rawExchange(barePort, 'GET / HTTP/1.1\r\nHost: x\r\n'), 408, 'request_timeout');
      expect(body.type).toBe('https://errors.test/request_timeout');
    });

    it('a body not received in time: 408 request_timeout', async () => {
      const raw = await rawExchange(barePort, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
      expectRawProblem(raw, 408, 'request_timeout');
    });

    it('nothing is written into a response that has already started', async () => {
      // The response's headers go out before the body has arrived; the timeout then only closes.
      const started = createServer({ requestTimeout: 300, headersTimeout: 200, connectionsCheckingInterval: 50 }, (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('partial');
      });
      installClientErrorHandler(started, { errorBaseUrl: 'https://errors.test', logger: pino({ level: 'silent' }) });
      await new Promise<void>((resolve) => started.listen(0, '127.0.0.1', resolve));
      try {
        const raw = await rawExchange(
          (started.address() as AddressInfo).port,
          'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc',
        );
        expect(raw.startsWith('HTTP/1.1 200 OK')).toBe(true);
        expect(raw).not.toContain('request_timeout');
      } finally {
        started.closeAllConnections();
        await new Promise<void>((resolve) => started.close(() => resolve()));
      }
    });

    it('each refusal is logged with its request id and code, never the bytes sent', async () => {
      const lines: string[] = [];
      const logged = createServer({}, (_req, res) => res.end());
      installClientErrorHandler(logged, {
        errorBaseUrl: 'https://errors.test',
        logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
      });
      await new Promise<void>((resolve) => logged.listen(0, '127.0.0.1', resolve));
      try {
        const raw = await rawExchange(
          (logged.address() as AddressInfo).port,
          `GET / HTTP/1.1\r\nAuthorization: Bearer secret-token-xyz\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
        );
        const body = expectRawProblem(raw, 431, 'request_header_fields_too_large');
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0])).toMatchObject({
          level: 30,
          req_id: body.request_id,
          err_code: 'HPE_HEADER_OVERFLOW',
          status: 431,
        });
        expect(lines[0]).not.toContain('secret-token-xyz');
      } finally {
        logged.closeAllConnections();
        await new Promise<void>((resolve) => logged.close(() => resolve()));
      }
    });

    it('a request answered normally is not affected', async () => {
      const text = await new Promise<string>((resolve, reject) => {
        const r = httpRequest({ port: barePort, host: '127.0.0.1', method: 'POST', path: '/' }, (res) => {
          let s = '';
          res.on('data', (c: Buffer) => (s += c.toString()));
          res.on('end', () => resolve(s));
        });
        r.on('error', reject);
        r.end('body');
      });
      expect(text).toBe('ok');
    });
  });
});

describe('uploads without a Content-Length (chunked)', () => {
  const MAX_UPLOAD = 100_000;
  let t: TestApp;
  let f: RoleFixture;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD) });
    f = await t.roleFixture();
    port = (t.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  /** POSTs `body` in 16 KB chunks with Transfer-Encoding: chunked (no Content-Length to check). */
  function chunkedPost(path: string, type: string, body: Buffer): Promise<{ status: number; body: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { port, host: '127.0.0.1', method: 'POST', path, headers: { 'Content-Type': type, Authorization: `Bearer ${f.tester.token}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
        },
      );
      // The server may answer and close before the whole body is sent.
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    });
  }

  it('are held to MAX_UPLOAD_BYTES plus the multipart overhead as a whole (a padded body is 413, nothing imported)', async () => {
    const count = async () => Number((await t.db.query(`SELECT count(*)::int AS n FROM junit_imports`))[0].n);
    const report = fixture('basic.xml');
    // Bytes before the first boundary are skipped by the multipart parser: only the bound on the
    // whole body refuses them (a declared Content-Length would have been refused up front).
    const bound = maxBodyBytes({ maxBytes: MAX_UPLOAD, maxFiles: t.config.maxUploadFiles });
    const padding = Buffer.alloc(bound + 1, 0x20);
    const padded = multipart(report, padding);
    const before = await count();
    const res = await chunkedPost(`/api/v1/projects/${f.projectId}/imports/junit`, padded.type, padded.body);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(await count()).toBe(before);

    // The same report without the padding, chunked too, imports.
    const plain = multipart(report);
    const ok = await chunkedPost(`/api/v1/projects/${f.projectId}/imports/junit`, plain.type, plain.body);
    expect(ok.status).toBe(201);
    expect(await count()).toBe(before + 1);
  });
});
