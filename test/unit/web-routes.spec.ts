import { decodeSegment, hasDotSegment } from '../../web/src/paths';

// Found by an audit: ids from the address went into API paths as decoded, so `#/runs/..%2Fusers%2Fme`
// fetched /api/v1/users/me; a malformed escape in the address threw and blanked the page.
describe('dashboard addresses', () => {
  it('decodes segments, and keeps a malformed escape as typed instead of throwing', () => {
    expect(decodeSegment('a%20b')).toBe('a b');
    expect(decodeSegment('%E0%A4%A')).toBe('%E0%A4%A');
  });

  it.each<[string, boolean]>([
    ['/test-runs/0190d1c2-7c3a-7b4e-8f00-000000000000', false],
    ['/test-runs/../users/me', true],
    ['/test-runs/./x', true],
    ['/environments/a..b/revisions', false],
    ['/test-runs/x?search=..', false],
  ])('%s has a dot segment: %s', (path, expected) => {
    expect(hasDotSegment(path)).toBe(expected);
  });

  it.each<[string, string]>([
    ['<id>%2Fexport', '<id>%2Fexport'],
    ['<id>%3Ffields%3Did', '<id>%3Ffields=id'],
    ['a%23b', 'a%23b'],
    ['%2541', '%2541'],
    ['caf%C3%A9', 'café'],
  ])('an id decoded from %s stays one path segment (%s)', (segment, expected) => {
    // A `/`, `?`, `#` or `%` in an id would otherwise address another resource or add a query.
    expect(decodeSegment(segment)).toBe(expected);
  });

  it('an id from the address that climbs out of its resource is never requested', () => {
    // Its slashes stay escaped: one segment, which the API answers 404.
    expect(decodeSegment('..%2Fusers%2Fme')).toBe('..%2Fusers%2Fme');
    // A segment that is a dot segment once decoded is refused before any request.
    expect(hasDotSegment(`/test-runs/${decodeSegment('%2E%2E')}`)).toBe(true);
  });
});
