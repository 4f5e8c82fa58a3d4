import { nextLinkHeader, nextPageUrl } from './link';

describe('nextPageUrl: the same path and query with the new cursor', () => {
  it.each<[string, string, string]>([
    ['no query', '/api/v1/x', '/api/v1/x?cursor=C.T'],
    ['empty cursor replaced in place', '/x?a=1&cursor=&b=2', '/x?a=1&cursor=C.T&b=2'],
    ['old cursor replaced', '/x?cursor=old.tag&a=1', '/x?cursor=C.T&a=1'],
    ['appended when absent', '/x?a=1', '/x?a=1&cursor=C.T'],
    [
      'repeated cursor: the first replaced, others dropped',
      '/x?cursor=&a=1&cursor=z',
      '/x?cursor=C.T&a=1',
    ],
    ['other parameters byte for byte', '/x?s=%61+b&t=a,b&cursor=', '/x?s=%61+b&t=a,b&cursor=C.T'],
    ['an encoded cursor name counts', '/x?%63ursor=&a', '/x?cursor=C.T&a'],
    ['a malformed escape is kept', '/x?q=%zz&cursor=', '/x?q=%zz&cursor=C.T'],
    // Characters a URI may not hold are escaped (">" would end the Link header's <…>).
    ['">" in a filter', '/x?search=a>b&cursor=', '/x?search=a%3Eb&cursor=C.T'],
    ['space, quote, angle brackets', '/x?q=a b"<c>', '/x?q=a%20b%22%3Cc%3E&cursor=C.T'],
    // Node reads the request line byte per character: "é" sent as UTF-8 is two of them.
    ['raw UTF-8 bytes keep their bytes', '/x?q=\u00c3\u00a9', '/x?q=%C3%A9&cursor=C.T'],
    ['reserved characters stay', "/x?q=a:b/c?d@e!$'()*,;[]", "/x?q=a:b/c?d@e!$'()*,;[]&cursor=C.T"],
  ])('%s', (_name, url, expected) => {
    expect(nextPageUrl(url, 'C.T')).toBe(expected);
  });

  it('the Link header value (RFC 8288)', () => {
    expect(nextLinkHeader('/x?a=1', 'C_-.T')).toBe('</x?a=1&cursor=C_-.T>; rel="next"');
  });
});
