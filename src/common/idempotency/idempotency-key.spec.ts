import {
  idempotencyKeyProblem,
  jsonFingerprint,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  multipartBoundary,
  queryOf,
  RawBodyFingerprint,
} from './idempotency-key';

describe('idempotencyKeyProblem', () => {
  it.each([
    ['a', null],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', null],
    ['with space and ~!@#$%^&*()', null],
    ['x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH), null],
    ['', 'must not be empty'],
    ['x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1), 'must be at most 255 characters long'],
    ['tab\there', 'must contain only printable ASCII characters'],
    ['é', 'must contain only printable ASCII characters'],
    ['del\x7f', 'must contain only printable ASCII characters'],
    ['nul\u0000', 'must contain only printable ASCII characters'],
  ])('%j → %s', (key, problem) => {
    expect(idempotencyKeyProblem(key)).toBe(problem);
  });
});

describe('multipartBoundary', () => {
  it.each([
    ['multipart/form-data; boundary=abc123', 'abc123'],
    ['multipart/form-data; boundary="a b;c"', 'a b;c'],
    ['multipart/form-data;boundary=xyz; charset=utf-8', 'xyz'],
    ['multipart/form-data', null],
    [undefined, null],
  ])('%s → %s', (type, boundary) => {
    expect(multipartBoundary(type)).toBe(boundary);
  });
});

describe('queryOf', () => {
  it.each([
    ['/api/v1/x', ''],
    ['/api/v1/x?dry_run=true', 'dry_run=true'],
    ['/api/v1/x?', ''],
  ])('%s → %j', (url, query) => {
    expect(queryOf(url)).toBe(query);
  });
});

describe('jsonFingerprint', () => {
  it('is the same for the same body and query', () => {
    expect(jsonFingerprint('', { name: 'a', n: 1 })).toBe(jsonFingerprint('', { name: 'a', n: 1 }));
  });
  it.each([
    ['another value', '', { name: 'b' }],
    ['another query', 'x=1', { name: 'a' }],
    ['no body', '', undefined],
    ['another field order', '', { n: 1, name: 'a' }],
  ])('differs for %s', (_what, query, body) => {
    expect(jsonFingerprint(query, body)).not.toBe(jsonFingerprint('', { name: 'a' }));
  });
});

/** A multipart body with `boundary`, as a client would send it. */
function multipart(boundary: string, file: string, fields: Record<string, string> = {}): Buffer {
  const parts = Object.entries(fields).map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="r.xml"\r\n` +
      `Content-Type: application/xml\r\n\r\n${file}\r\n`,
  );
  return Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8');
}

/** The fingerprint of `body` fed in chunks of `size` bytes. */
function fingerprint(body: Buffer, boundary: string, size: number, query = ''): string {
  const fp = new RawBodyFingerprint(query, `multipart/form-data; boundary=${boundary}`);
  for (let at = 0; at < body.length; at += size) fp.update(body.subarray(at, at + size));
  return fp.digest();
}

describe('RawBodyFingerprint', () => {
  const report = '<testsuite name="s"><testcase name="t"/></testsuite>';
  const expected = fingerprint(
    multipart('----b1', report, { dry_run: 'false' }),
    '----b1',
    1 << 16,
  );

  it.each([1, 2, 3, 5, 7, 16, 1 << 16])(
    'ignores the boundary, fed in chunks of %i bytes',
    (size) => {
      const boundary = '----other-boundary-0123456789';
      expect(fingerprint(multipart(boundary, report, { dry_run: 'false' }), boundary, size)).toBe(
        expected,
      );
    },
  );

  it.each([
    ['the file bytes', multipart('b2', `${report} `, { dry_run: 'false' })],
    ['a field', multipart('b2', report, { dry_run: 'true' })],
    ['a missing field', multipart('b2', report)],
  ])('differs when %s differ', (_what, body) => {
    expect(fingerprint(body, 'b2', 4)).not.toBe(expected);
  });

  it('differs for another query string', () => {
    expect(fingerprint(multipart('b2', report, { dry_run: 'false' }), 'b2', 4, 'x=1')).not.toBe(
      expected,
    );
  });

  it('hashes a body without boundary as its bytes', () => {
    const a = new RawBodyFingerprint('', 'application/octet-stream');
    a.update(Buffer.from('abc'));
    const b = new RawBodyFingerprint('', 'application/octet-stream');
    b.update(Buffer.from('ab'));
    b.update(Buffer.from('c'));
    expect(a.digest()).toBe(b.digest());
  });
});
