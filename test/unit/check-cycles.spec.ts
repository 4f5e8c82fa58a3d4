import { findCycles, moduleGraph, moduleOf } from '../../scripts/check-cycles';

describe('dependency-cycle check', () => {
  it.each([
    ['modules/test-runs/test-runs.service.ts', 'test-runs'],
    ['modules/run-items/dto/run-item.dto.ts', 'run-items'],
    ['common/persistence/db.service.ts', null],
    ['main.ts', null],
  ])('moduleOf(%s) is %p', (file, expected) => {
    expect(moduleOf(file)).toBe(expected);
  });

  it('collapses files into feature modules, ignoring imports within a module and outside modules', () => {
    const graph = moduleGraph({
      'modules/a/a.service.ts': [
        'modules/a/a.repository.ts',
        'modules/b/b.service.ts',
        'common/x.ts',
      ],
      'modules/a/a.repository.ts': ['common/x.ts'],
      'modules/b/b.service.ts': [],
      'common/x.ts': ['modules/b/b.service.ts'],
    });
    expect(graph).toEqual(
      new Map([
        ['a', new Set(['b'])],
        ['b', new Set()],
      ]),
    );
  });

  it.each([
    ['no edges', { a: [], b: [] }, []],
    ['a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['a diamond', { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, []],
    ['two modules importing each other', { a: ['b'], b: ['a'] }, [['a', 'b', 'a']]],
    ['a cycle through a third', { a: ['b'], b: ['c'], c: ['a'] }, [['a', 'b', 'c', 'a']]],
    [
      'two separate cycles',
      { a: ['b'], b: ['a'], c: ['d'], d: ['c'] },
      [
        ['a', 'b', 'a'],
        ['c', 'd', 'c'],
      ],
    ],
  ])('finds the cycles of %s', (_label, edges, expected) => {
    const graph = new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v as string[])]));
    expect(findCycles(graph)).toEqual(expected);
  });
});
