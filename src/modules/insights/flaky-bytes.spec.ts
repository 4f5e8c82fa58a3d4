import { flakyBytes } from './insights.service';

type Ranked = Parameters<typeof flakyBytes>[0][number];

function ranked(title: string): Ranked {
  return {
    test_case_id: '01a210b4-72ec-778d-9bfe-30ca318817e7',
    title,
    runs: 30,
    passed: 0,
    failing: 0,
    flips: 0,
    flip_rate: 0,
    flaky_attempts: 0,
    last_status: null,
    last_failure_run_id: null,
  };
}

describe('flakyBytes: what a cached flaky ranking is counted for', () => {
  it('counts each case and its title in UTF-16 (windows are not kept with the ranking)', () => {
    const empty = flakyBytes([]);
    const bare = flakyBytes([ranked('')]);
    expect(bare).toBeGreaterThan(empty);
    for (const title of ['Checkout', 'Checkout with a saved card', 'é'.repeat(300)]) {
      expect(flakyBytes([ranked(title)]) - bare).toBe(2 * title.length);
    }
    expect(flakyBytes([ranked('a'), ranked('bc')])).toBe(empty + 2 * (bare - empty) + 2 * 3);
  });
});
