import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { AppException } from '../errors/app-exception';
import {
  type ContentCoding,
  createBodyDecoder,
  isDecodingError,
  requestContentCoding,
} from './content-encoding';

describe('requestContentCoding', () => {
  it.each([
    [undefined, { coding: null }],
    ['', { coding: null }],
    ['identity', { coding: null }],
    ['IDENTITY', { coding: null }],
    ['gzip', { coding: 'gzip' }],
    ['GZIP', { coding: 'gzip' }],
    ['deflate', { coding: 'deflate' }],
    ['br', { coding: 'br' }],
    [' br ', { coding: 'br' }],
    ['compress', { unsupported: 'compress' }],
    ['zstd', { unsupported: 'zstd' }],
    ['x-gzip', { unsupported: 'x-gzip' }],
    ['identity, gzip', { unsupported: 'identity, gzip' }],
    ['gzip, br', { unsupported: 'gzip, br' }],
    ['gzip;q=1', { unsupported: 'gzip;q=1' }],
    [['gzip', 'br'], { unsupported: 'gzip, br' }],
  ])('%j → %j', (header, expected) => {
    expect(requestContentCoding({ headers: { 'content-encoding': header as string | undefined } })).toEqual(
      expected,
    );
  });
});

describe('isDecodingError', () => {
  const zlibError = (() => {
    try {
      gunzipSync(Buffer.from('{}'));
    } catch (e) {
      return e;
    }
    return null;
  })();
  it.each([
    ['a zlib error', zlibError, true],
    ['a body-parser error copied from a zlib error', { errno: -3, code: 'Z_DATA_ERROR', status: 400 }, true],
    ['a body-parser 413', { type: 'entity.too.large', status: 413 }, false],
    ['malformed JSON', Object.assign(new SyntaxError('x'), { type: 'entity.parse.failed' }), false],
    ['an aborted request', { type: 'request.aborted', errno: undefined }, false],
    ['a string', 'boom', false],
    ['null', null, false],
  ])('%s → %s', (_name, err, expected) => {
    expect(isDecodingError(err)).toBe(expected);
  });
});

describe('createBodyDecoder', () => {
  async function decode(
    coding: ContentCoding,
    bytes: Buffer,
    maxBytes = 1_000_000,
  ): Promise<Buffer | AppException> {
    const { input, output } = createBodyDecoder(coding, maxBytes);
    const chunks: Buffer[] = [];
    return new Promise((resolve) => {
      output.on('data', (c: Buffer) => chunks.push(c));
      output.once('end', () => resolve(Buffer.concat(chunks)));
      output.once('error', (e) => resolve(e as AppException));
      input.end(bytes);
    });
  }
  const text = Buffer.from('{"hello":"world"}'.repeat(100));

  it.each([
    ['gzip', gzipSync(text)],
    ['deflate', deflateSync(text)],
    ['br', brotliCompressSync(text)],
  ] as const)('decodes %s', async (coding, bytes) => {
    expect((await decode(coding, bytes)).toString()).toBe(text.toString());
  });

  it.each([
    ['gzip over plain bytes', 'gzip', text],
    ['deflate over plain bytes', 'deflate', text],
    ['br over plain bytes', 'br', text],
    ['truncated gzip', 'gzip', gzipSync(text).subarray(0, 12)],
    ['truncated br', 'br', brotliCompressSync(text).subarray(0, 5)],
  ] as const)('%s: 400 invalid_content_encoding', async (_name, coding, bytes) => {
    const result = await decode(coding, bytes);
    expect(result).toBeInstanceOf(AppException);
    expect((result as AppException).code).toBe('invalid_content_encoding');
    expect((result as AppException).status).toBe(400);
  });

  it('stops at maxBytes decoded bytes: 413 payload_too_large', async () => {
    const bomb = gzipSync(Buffer.alloc(50_000_000));
    expect(bomb.length).toBeLessThan(100_000);
    const result = await decode('gzip', bomb, 1_000_000);
    expect(result).toBeInstanceOf(AppException);
    expect((result as AppException).code).toBe('payload_too_large');
  });

  it('accepts exactly maxBytes', async () => {
    const result = await decode('gzip', gzipSync(Buffer.alloc(1000, 0x61)), 1000);
    expect(Buffer.isBuffer(result) && result.length).toBe(1000);
  });
});
