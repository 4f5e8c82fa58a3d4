import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { BROTLI_WINDOW_BITS, COMPRESSION_MIN_BYTES } from '../../src/common/http/compression';
import { createTestApp, RoleFixture, TestApp } from '../support/test-app';

const API = '/api/v1';

/**
 * The window size (WBITS) a brotli stream declares in its first bits (RFC 7932 §9.1, read least
 * significant bit first): 0 → 16; 1 and three bits n ≠ 0 → 17 + n; 1, 000 and three bits m → 8 + m
 * (m ≠ 0) or 17 (m = 0).
 */
function brotliWindowBits(stream: Buffer): number {
  const bits = stream[0] | (stream[1] << 8);
  if ((bits & 1) === 0) return 16;
  const n = (bits >> 1) & 7;
  if (n !== 0) return 17 + n;
  const m = (bits >> 4) & 7;
  return m === 0 ? 17 : 8 + m;
}

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as sent on the wire (not decoded). */
  body: Buffer;
}

/**
 * Response compression (issue #19 §5): bodies over 1 KB are compressed when accepted (`br`
 * preferred, then `gzip`), decompress to the uncompressed body byte for byte, carry `Vary:
 * Accept-Encoding`; small bodies, HEAD, 304 and PDF exports are sent as they are. Requests go
 * through node:http so that the bytes are checked as sent, without a client decoding them.
 */
describe('HTTP response compression', () => {
  let t: TestApp;
  let f: RoleFixture;
  let port: number;
  let runPath: string;
  let listPath: string;

  beforeAll(async () => {
    t = await createTestApp();
    f = await t.roleFixture();
    if (t.server.address() === null) {
      await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', resolve));
    }
    port = (t.server.address() as AddressInfo).port;
    const env = await t
      .req('post', `${API}/environments`, f.tester.token)
      .send({ project_id: f.projectId, name: t.unique('Env '), description: 'x'.repeat(2000) });
    expect(env.status).toBe(201);
    for (let i = 0; i < 5; i++) {
      const run = await t
        .req('post', `${API}/test-runs`, f.tester.token)
        .send({ project_id: f.projectId, name: t.unique('Run '), environment_id: env.body.id });
      expect(run.status).toBe(201);
      runPath = `${API}/test-runs/${String(run.body.id)}`;
    }
    listPath = `${API}/test-runs?project_id=${f.projectId}`;
  });
  afterAll(async () => {
    await t.close();
  });

  function raw(
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
    body?: string,
  ): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path,
          method,
          headers: { authorization: `Bearer ${f.viewer.token}`, ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  const decoders: Record<string, (b: Buffer) => Buffer> = {
    br: brotliDecompressSync,
    gzip: gunzipSync,
  };

  describe.each(['br', 'gzip'])('%s', (coding) => {
    it.each([
      ['a run list page (JSON)', () => listPath],
      ['a run (written in parts with its snapshot)', () => runPath],
      ['an environment (res.json)', () => `${API}/environments?project_id=${f.projectId}`],
    ])('%s decompresses to the uncompressed body, same ETag', async (_name, path) => {
      const plain = await raw(path(), { 'accept-encoding': 'identity' });
      expect(plain.status).toBe(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.length).toBeGreaterThanOrEqual(COMPRESSION_MIN_BYTES);
      const packed = await raw(path(), { 'accept-encoding': coding });
      expect(packed.status).toBe(200);
      expect(packed.headers['content-encoding']).toBe(coding);
      expect(packed.headers.vary).toMatch(/accept-encoding/i);
      expect(packed.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(packed.body.length).toBeLessThan(plain.body.length);
      expect(decoders[coding](packed.body).equals(plain.body)).toBe(true);
      expect(packed.headers.etag).toBe(plain.headers.etag);
    });

    it('a matching If-None-Match is still a 304 without a body', async () => {
      const first = await raw(runPath, { 'accept-encoding': coding });
      const etag = first.headers.etag as string;
      const again = await raw(runPath, { 'accept-encoding': coding, 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers['content-encoding']).toBeUndefined();
      expect(again.headers.etag).toBe(etag);
      expect(again.headers.vary).toMatch(/accept-encoding/i);
    });
  });

  it.each(['br', 'gzip'])(
    'a large body written in parts (the component graph, %s) streams through the compressor whole',
    async (coding) => {
      // 3,000 components with random names: a graph of about 400 KB that compresses to far more
      // than a response buffers, so the compressor's output meets backpressure.
      await t.db.query(
        `INSERT INTO components (id, project_id, name, key)
         SELECT gen_random_uuid(), $1, 'Bulk ' || md5(random()::text) || md5(random()::text), 'bulk-' || i
           FROM generate_series(1, 3000) AS i
         ON CONFLICT DO NOTHING`,
        [f.projectId],
      );
      const path = `${API}/components/graph?project_id=${f.projectId}`;
      const plain = await raw(path, { 'accept-encoding': 'identity' });
      expect(plain.status).toBe(200);
      expect(plain.body.length).toBeGreaterThan(300_000);
      const packed = await raw(path, { 'accept-encoding': coding });
      expect(packed.status).toBe(200);
      expect(packed.headers['content-encoding']).toBe(coding);
      expect(packed.body.length).toBeGreaterThan(64 * 1024);
      expect(decoders[coding](packed.body).equals(plain.body)).toBe(true);
      expect(packed.headers.etag).toBe(plain.headers.etag);
    },
    30_000,
  );

  it('br uses a 256 KB window (an encoder holds memory by its window; 4 MB by default)', async () => {
    const packed = await raw(listPath, { 'accept-encoding': 'br' });
    expect(packed.headers['content-encoding']).toBe('br');
    expect(brotliWindowBits(packed.body)).toBe(BROTLI_WINDOW_BITS);
    expect(BROTLI_WINDOW_BITS).toBe(18);
  });

  it('br is preferred over gzip; gzip when br is refused; identity when nothing is accepted', async () => {
    expect(
      (await raw(listPath, { 'accept-encoding': 'gzip, deflate, br' })).headers['content-encoding'],
    ).toBe('br');
    expect(
      (await raw(listPath, { 'accept-encoding': 'gzip, br;q=0' })).headers['content-encoding'],
    ).toBe('gzip');
    const none = await raw(listPath);
    expect(none.status).toBe(200);
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.headers['content-length']).toBe(String(none.body.length));
    expect(none.headers.vary).toMatch(/accept-encoding/i);
  });

  it('a small body (under 1 KB) is not compressed, and says Vary: Accept-Encoding', async () => {
    const tc = await t
      .req('post', `${API}/test-cases`, f.tester.token)
      .send({ project_id: f.projectId, title: 'Tiny' });
    const small = await raw(`${API}/test-cases/${String(tc.body.id)}`, {
      'accept-encoding': 'br, gzip',
    });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(COMPRESSION_MIN_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers['content-length']).toBe(String(small.body.length));
    expect(small.headers.vary).toMatch(/accept-encoding/i);
    JSON.parse(small.body.toString('utf8'));
  });

  it('HEAD is not compressed and keeps the Content-Length of the uncompressed body', async () => {
    const plain = await raw(runPath, { 'accept-encoding': 'identity' });
    const head = await raw(runPath, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBeUndefined();
    expect(head.headers['content-length']).toBe(String(plain.body.length));
    expect(head.body.length).toBe(0);
  });

  it('problems over 1 KB are compressed too and stay problem+json', async () => {
    // 40 unknown fields: a 422 naming each of them, well over 1 KB.
    const body = JSON.stringify({
      project_id: f.projectId,
      name: 'x',
      ...Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`unknown_field_${k}`, 1])),
    });
    const res = await raw(
      `${API}/test-runs`,
      { 'accept-encoding': 'gzip', 'content-type': 'application/json' },
      'POST',
      body,
    );
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(res.body).toString('utf8'))).toMatchObject({
      code: 'validation_error',
    });
  });

  it('a PDF export goes out as it is (not a compressible type), CSV compressed', async () => {
    const pdf = await raw(`${runPath}/export?format=pdf`, { 'accept-encoding': 'br, gzip' });
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-encoding']).toBeUndefined();
    expect(pdf.body.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const csvPlain = await raw(`${runPath}/export?format=csv`, { 'accept-encoding': 'identity' });
    expect(csvPlain.status).toBe(200);
    const csv = await raw(`${runPath}/export?format=csv`, { 'accept-encoding': 'gzip' });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(csv.body).equals(csvPlain.body)).toBe(true);
  });
});
