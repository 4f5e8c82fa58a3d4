import { CanonicalIdPipe } from './canonical-id.pipe';

describe('CanonicalIdPipe', () => {
  const pipe = new CanonicalIdPipe();
  const upper = '0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B';

  it.each([
    ['a uuid path parameter is lower-cased', upper, 'param', upper.toLowerCase()],
    ['a lower-case uuid is unchanged', upper.toLowerCase(), 'param', upper.toLowerCase()],
    ['a parameter that is no uuid is left as it came', 'TC-12', 'param', 'TC-12'],
    ['a revision number is left as it came', '3', 'param', '3'],
    ['a body is never touched', upper, 'body', upper],
    ['a query value is never touched', upper, 'query', upper],
  ] as const)('%s', (_name, value, type, expected) => {
    expect(pipe.transform(value, { type })).toBe(expected);
  });
});
