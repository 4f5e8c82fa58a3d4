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
  ])('%s', (_name, url, expected) => {
    expect(nextPageUrl(url, 'C.T')).toBe(expected);
  });

  it('the Link header value (RFC 8288)', () => {
    expect(nextLinkHeader('/x?a=1', 'C_-.T')).toBe('</x?a=1&cursor=C_-.T>; rel="next"');
  });
});
