import { jsonDepth, MAX_JSON_DEPTH } from './middleware';

describe('jsonDepth', () => {
  it.each<[unknown, number]>([
    [null, 0],
    ['text', 0],
    [{}, 1],
    [[], 1],
    [{ a: 1, b: [1, 2] }, 2],
    [{ a: { b: { c: [{}] } } }, 5],
    [[[], [[[]]], {}], 4],
  ])('%j has depth %i', (value, depth) => {
    expect(jsonDepth(value)).toBe(depth);
  });

  it('measures very deep values without recursion and stops past the limit', () => {
    const deep = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)) as unknown;
    expect(jsonDepth(deep, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth(deep)).toBe(200_000);
  });
});
