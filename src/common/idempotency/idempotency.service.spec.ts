import { maxBodyBytes } from '../../modules/imports/upload';
import { fingerprintReadLimit, isDeterministicRefusal } from './idempotency.service';

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
