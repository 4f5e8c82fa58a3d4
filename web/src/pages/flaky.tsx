import { getJson } from '../api';
import { outcomeOf, ratio, statusLabel } from '../format';
import { useLoad } from '../hooks';
import { ProjectNav } from '../project-nav';
import type { FlakyCase, FlakyRecentResult, Page } from '../types';
import { Empty, PageTitle, Show, StatusBadge } from '../ui';

/** Runs each case's stats and strip cover (the API's default window). */
export const FLAKY_WINDOW = 30;
const FLAKY_PAGE_SIZE = 25;

export function FlakyPage({ projectId }: { projectId: string }) {
  // One request: each case of the ranking carries the window its strip draws (`recent`).
  const flaky = useLoad(`flaky:${projectId}`, () =>
    getJson<Page<FlakyCase>>('/test-cases/flaky', { project_id: projectId, window: FLAKY_WINDOW, page_size: FLAKY_PAGE_SIZE }),
  );
  return (
    <>
      <ProjectNav projectId={projectId} current="flaky" />
      <PageTitle
        sub={`Cases whose results flip between pass and fail over their last ${FLAKY_WINDOW} runs, most unstable first. Each square is one run, oldest on the left.`}
      >
        Flaky tests
      </PageTitle>
      <Show value={flaky} what="flaky tests">
        {(f) =>
          f.items.length === 0 ? (
            <Empty>No flaky tests: no case flipped between pass and fail in its recent runs.</Empty>
          ) : (
            <table class="flaky">
              <caption class="visually-hidden">Flaky tests, ranked</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Rank
                  </th>
                  <th scope="col">Test case</th>
                  <th scope="col" class="num">
                    Flip rate
                  </th>
                  <th scope="col" class="num">
                    Flips
                  </th>
                  <th scope="col" class="num">
                    Passed / failing
                  </th>
                  <th scope="col" class="num">
                    Flaky attempts
                  </th>
                  <th scope="col">Last result</th>
                  <th scope="col">History</th>
                </tr>
              </thead>
              <tbody>
                {f.items.map((c, i) => (
                  <tr key={c.test_case_id}>
                    <td class="num">{i + 1}</td>
                    <th scope="row">{c.title}</th>
                    <td class="num">{ratio(c.flip_rate)}</td>
                    <td class="num">{c.flips}</td>
                    <td class="num">
                      {c.passed} / {c.failing}
                    </td>
                    <td class="num">{c.flaky_attempts}</td>
                    <td>
                      <StatusBadge status={c.last_status} />
                    </td>
                    <td>
                      <HistoryStrip title={c.title} recent={c.recent} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </>
  );
}

/**
 * Pass/fail squares, oldest first, from a case's window (`recent`, newest first); each one links to
 * its run and says its result and how many runs ago it was, also for screen readers.
 */
export function HistoryStrip({ title, recent }: { title: string; recent: FlakyRecentResult[] }) {
  const ordered = [...recent].reverse();
  const summary = ordered.map((h) => outcomeOf(h.status)).map((o) => (o === 'pass' ? 'P' : o === 'fail' ? 'F' : '·'));
  return (
    <ol class="strip" aria-label={`History of ${title}, oldest first: ${summary.join('')}`}>
      {ordered.map((h, i) => {
        const label = `${statusLabel(h.status)}, ${runsAgo(ordered.length - 1 - i)}`;
        return (
          <li key={h.run_id}>
            <a href={`#/runs/${h.run_id}`} class={`square ${outcomeOf(h.status)}`} title={label}>
              <span class="visually-hidden">{label}</span>
            </a>
          </li>
        );
      })}
    </ol>
  );
}

/** Where a square's run stands in the window: 0 is the newest. */
function runsAgo(n: number): string {
  return n === 0 ? 'latest run' : n === 1 ? '1 run before the latest' : `${n} runs before the latest`;
}
