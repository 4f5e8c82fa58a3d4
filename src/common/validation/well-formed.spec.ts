import { isWellFormedText, toWellFormedText } from './well-formed';

describe('well-formed UTF-16', () => {
  it.each<[string, boolean, string]>([
    ['', true, ''],
    ['plain', true, 'plain'],
    ['😀 pair', true, '😀 pair'],
    ['a\ud800@x.io', false, 'a\ufffd@x.io'],
    ['\udc00', false, '\ufffd'],
    ['\udc00\ud800', false, '\ufffd\ufffd'],
    ['x\ud83d', false, 'x\ufffd'],
    ['\ud83d\ude00\ud83d', false, '😀\ufffd'],
  ])('%j → well-formed %s, repaired %j', (input, ok, repaired) => {
    expect(isWellFormedText(input)).toBe(ok);
    expect(toWellFormedText(input)).toBe(repaired);
    // Same answer as the built-in of Node 20 (not in this project's TypeScript lib).
    expect((input as unknown as { isWellFormed(): boolean }).isWellFormed()).toBe(ok);
  });
});
