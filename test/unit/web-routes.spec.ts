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

  it('an id from the address that climbs out of its resource is never requested', () => {
    const id = decodeSegment('..%2Fusers%2Fme');
    expect(hasDotSegment(`/test-runs/${id}`)).toBe(true);
  });
});
