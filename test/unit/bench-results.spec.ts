import { loadBenchConfig, resultsTarget } from '../../bench/config';

describe('where the bench writes its results (resultsTarget)', () => {
  const committed = '/repo/bench/results.json';

  it.each<[string, Record<string, string>, number, string | null]>([
    ['a run that measured something, default file', {}, 12, committed],
    ['a run that measured nothing (seed only, held servers)', {}, 0, null],
    ['BENCH_RESULTS given, nothing measured', { BENCH_RESULTS: '/tmp/x.json' }, 0, '/tmp/x.json'],
    ['BENCH_RESULTS given, something measured', { BENCH_RESULTS: '/tmp/x.json' }, 3, '/tmp/x.json'],
    ['a blank BENCH_RESULTS is the default', { BENCH_RESULTS: '  ' }, 0, null],
  ])('%s', (_, env, measured, expected) => {
    expect(resultsTarget(loadBenchConfig(env, committed), measured)).toBe(expected);
  });
});
