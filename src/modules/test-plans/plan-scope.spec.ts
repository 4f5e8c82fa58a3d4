import { planCaseOrder } from './plan-scope';

describe('planCaseOrder', () => {
  it.each([
    [[], [], []],
    [['a', 'b'], [], ['a', 'b']],
    [[], ['c', 'a'], ['c', 'a']],
    [
      ['a', 'b'],
      ['c', 'a', 'd'],
      ['a', 'b', 'c', 'd'],
    ],
    [
      ['a', 'a', 'b'],
      ['b', 'b'],
      ['a', 'b'],
    ],
  ])('suites %j + explicit %j → %j', (suites, explicit, expected) => {
    expect(planCaseOrder(suites, explicit)).toEqual(expected);
  });
});
