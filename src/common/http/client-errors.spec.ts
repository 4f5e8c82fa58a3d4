import { clientErrorCode, rawProblemResponse } from './client-errors';

describe('clientErrorCode', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'request_header_fields_too_large'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'payload_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'request_timeout'],
    ['HPE_INVALID_METHOD', 'bad_request'],
    ['HPE_INVALID_CONSTANT', 'bad_request'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 'bad_request'],
    ['HPE_INVALID_EOF_STATE', 'bad_request'],
    [undefined, 'bad_request'],
  ])('%s → %s', (code, expected) => {
    expect(clientErrorCode({ code })).toBe(expected);
  });
});

describe('rawProblemResponse', () => {
  it.each([
    ['request_header_fields_too_large', 431],
    ['bad_request', 400],
    ['request_timeout', 408],
    ['payload_too_large', 413],
  ] as const)('%s: a complete HTTP/1.1 response with a problem body (%i)', (code, status) => {
    const raw = rawProblemResponse(code, 'https://errors.example', 'rid-1').toString('utf8');
    const [head, body] = raw.split('\r\n\r\n');
    const lines = head.split('\r\n');
    expect(lines[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} [A-Za-z ]+$`));
    expect(lines).toEqual(
      expect.arrayContaining([
        'Content-Type: application/problem+json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'X-Request-Id: rid-1',
        'Connection: close',
      ]),
    );
    expect(JSON.parse(body)).toEqual({
      type: `https://errors.example/${code}`,
      title: expect.any(String),
      status,
      detail: expect.any(String),
      instance: '',
      code,
      request_id: 'rid-1',
    });
  });
});
