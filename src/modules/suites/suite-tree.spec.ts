import { checkSuiteParent, MAX_SUITE_DEPTH } from './suite-tree';

describe('checkSuiteParent', () => {
  it('allows four levels and no more', () => {
    expect(MAX_SUITE_DEPTH).toBe(4);
  });

  it.each([
    ['new suite under a root', null, ['r'], 1, null],
    ['new suite at level 4', null, ['c', 'b', 'a'], 1, null],
    ['new suite at level 5', null, ['d', 'c', 'b', 'a'], 1, 'suite_depth_limit_exceeded'],
    ['moving a 2-level subtree under level 2', 's', ['b', 'a'], 2, null],
    [
      'moving a 2-level subtree under level 3',
      's',
      ['c', 'b', 'a'],
      2,
      'suite_depth_limit_exceeded',
    ],
    ['a suite under itself', 's', ['s'], 1, 'suite_parent_cycle'],
    ['a suite under its grandchild', 's', ['gc', 'c', 's'], 3, 'suite_parent_cycle'],
    ['a suite under an unrelated leaf', 's', ['x', 'y'], 1, null],
  ] as const)('%s', (_name, suiteId, chain, height, expected) => {
    expect(checkSuiteParent({ suiteId, parentChain: chain, subtreeHeight: height })).toBe(expected);
  });
});
