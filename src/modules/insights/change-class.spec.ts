import { CHANGE_CLASSES, changeClassRank, classifyChange, isChangeClass } from './change-class';

describe('classifyChange', () => {
  it.each([
    [null, 'passed', 'added'],
    [null, 'failure', 'added'],
    ['passed', null, 'removed'],
    ['error', null, 'removed'],
    ['passed', 'failure', 'newly_failing'],
    ['passed', 'error', 'newly_failing'],
    ['skipped', 'failure', 'newly_failing'],
    ['untested', 'error', 'newly_failing'],
    ['xfailed', 'failure', 'newly_failing'],
    ['failure', 'passed', 'fixed'],
    ['error', 'xfailed', 'fixed'],
    ['failure', 'failure', 'still_failing'],
    ['failure', 'error', 'still_failing'],
    ['error', 'failure', 'still_failing'],
    ['passed', 'passed', 'unchanged'],
    ['skipped', 'skipped', 'unchanged'],
    ['untested', 'untested', 'unchanged'],
    ['passed', 'skipped', 'changed'],
    ['passed', 'xfailed', 'changed'],
    ['failure', 'skipped', 'changed'],
    ['error', 'blocked', 'changed'],
    ['failure', 'untested', 'changed'],
    ['blocked', 'passed', 'changed'],
    ['xpassed', 'passed', 'changed'],
  ] as const)('%s → %s is %s', (base, current, expected) => {
    expect(classifyChange(base, current)).toBe(expected);
  });

  it('refuses a case of neither run', () => {
    expect(() => classifyChange(null, null)).toThrow();
  });

  it('lists the classes in item order', () => {
    expect(CHANGE_CLASSES).toEqual([
      'newly_failing',
      'fixed',
      'still_failing',
      'added',
      'removed',
      'changed',
      'unchanged',
    ]);
    expect(changeClassRank('newly_failing')).toBe(1);
    expect(changeClassRank('unchanged')).toBe(7);
  });

  it.each([
    ['fixed', true],
    ['gone', false],
    [1, false],
  ])('isChangeClass(%p) is %p', (v, ok) => {
    expect(isChangeClass(v)).toBe(ok);
  });
});
