import { hasRole, isProjectRole, ProjectRole } from './roles';

describe('roles', () => {
  it.each<[ProjectRole, ProjectRole, boolean]>([
    ['viewer', 'viewer', true],
    ['viewer', 'tester', false],
    ['viewer', 'lead', false],
    ['tester', 'viewer', true],
    ['tester', 'tester', true],
    ['tester', 'lead', false],
    ['lead', 'viewer', true],
    ['lead', 'tester', true],
    ['lead', 'lead', true],
  ])('%s satisfies %s: %s', (actual, needed, ok) => {
    expect(hasRole(actual, needed)).toBe(ok);
  });

  it('recognises only the three roles', () => {
    expect(['viewer', 'tester', 'lead', 'admin', 'manager', ''].map(isProjectRole)).toEqual([
      true, true, true, false, false, false,
    ]);
  });
});
