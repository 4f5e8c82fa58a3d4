import { maxBodyBytes } from '../../modules/imports/upload';
import {
  fingerprintReadLimit,
  idempotencyPath,
  isDeterministicRefusal,
} from './idempotency.service';

describe('isDeterministicRefusal (which refusals of the database a stored 4xx may be)', () => {
  it.each([
    ['23505', 'unique violation', true],
    ['23514', 'check violation', true],
    ['23502', 'not-null violation', true],
    ['22001', 'string too long', true],
    ['22P02', 'invalid text representation', true],
    ['23503', 'foreign key violation (a row removed concurrently)', false],
    ['40001', 'serialization failure', false],
    ['40P01', 'deadlock', false],
    ['57014', 'statement timeout', false],
    ['P0001', 'raised exception', false],
  ])('%s (%s) → %s', (sqlstate, _what, stored) => {
    expect(isDeterministicRefusal(sqlstate)).toBe(stored);
  });
});

describe('fingerprintReadLimit (how much of an unread upload a fingerprint reads)', () => {
  it.each([
    [64 * 1024 * 1024, 1000],
    [64 * 1024 * 1024, 5000],
    [1024, 1],
    [1, 10_000],
  ])('reads every body the upload reader accepts (%d bytes in %d files)', (bytes, files) => {
    const accepted = maxBodyBytes({ maxBytes: bytes, maxFiles: files });
    expect(fingerprintReadLimit({ maxUploadBytes: bytes, maxUploadFiles: files })).toBe(accepted);
  });
});

describe('idempotencyPath (the path a key is scoped to)', () => {
  const ID = '019a1f7e-5c3b-7d2a-9e41-6b8f2c0d4a17';
  const routed = (route: string, params: Record<string, string>, originalUrl = '/ignored') =>
    idempotencyPath({ route: { path: route }, baseUrl: '', params, originalUrl, url: originalUrl });

  it.each<[string, string]>([
    ['an id as stored', ID],
    ['an id in upper case', ID.toUpperCase()],
    ['an id in mixed case', `${ID.slice(0, 8).toUpperCase()}${ID.slice(8)}`],
  ])('one scope for %s', (_label, id) => {
    expect(routed('/api/v1/test-runs/:id/imports/junit', { id })).toBe(
      `/api/v1/test-runs/${ID}/imports/junit`,
    );
  });

  it('the route, not the spelling of the URL: a trailing slash or an escaped letter', () => {
    expect(routed('/api/v1/test-runs', {}, '/api/v1/test-runs/')).toBe('/api/v1/test-runs');
    expect(
      routed(
        '/api/v1/test-runs/:id/clone',
        { id: ID },
        `/api/v1/test-runs/%30${ID.slice(1)}/clone`,
      ),
    ).toBe(`/api/v1/test-runs/${ID}/clone`);
  });

  it('a parameter that is no uuid stays as given, escaped', () => {
    expect(routed('/api/v1/things/:name', { name: 'a/B c' })).toBe('/api/v1/things/a%2FB%20c');
  });

  it('outside a route: the raw path without its query or trailing slash', () => {
    const bare = { route: undefined, baseUrl: '', params: {}, url: '/x' };
    expect(idempotencyPath({ ...bare, originalUrl: '/api/v1/nowhere/?a=1' })).toBe(
      '/api/v1/nowhere',
    );
    expect(idempotencyPath({ ...bare, originalUrl: '/' })).toBe('/');
  });
});
