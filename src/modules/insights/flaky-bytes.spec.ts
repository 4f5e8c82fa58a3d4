import { flakyBytes } from './insights.service';

type Ranked = Parameters<typeof flakyBytes>[0][number];

function ranked(title: string, w: string, r: string): Ranked {
  return {
    test_case_id: '01a210b4-72ec-778d-9bfe-30ca318817e7',
    title,
    runs: w.length,
    passed: 0,
    failing: 0,
    flips: 0,
    flip_rate: 0,
    flaky_attempts: 0,
    last_status: null,
    last_failure_run_id: null,
    w,
    r,
  };
}

describe('flakyBytes: what a cached flaky ranking is counted for', () => {
  it('counts each case, its title in UTF-16 and its window strings one byte a character', () => {
    const empty = flakyBytes([]);
    const bare = flakyBytes([ranked('', '', '')]);
    expect(bare).toBeGreaterThan(empty);
    for (const [title, w, r] of [
      ['Checkout', '', ''],
      ['', 'pf'.repeat(15), ''],
      ['', '', 'A'.repeat(640)],
      ['Checkout with a saved card', 'pfPx'.repeat(50), 'B'.repeat(4268)],
    ]) {
      expect(flakyBytes([ranked(title, w, r)]) - bare).toBe(2 * title.length + w.length + r.length);
    }
    expect(flakyBytes([ranked('a', 'pf', 'AAAA'), ranked('b', 'fp', 'BBBB')])).toBe(
      empty + 2 * (bare - empty) + 2 * (2 + 2 + 4),
    );
  });
});
