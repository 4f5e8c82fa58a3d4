import { getJson } from '../api';
import { dateTime, outcomeOf, ratio, statusLabel } from '../format';
import { useRef } from 'preact/hooks';
import { useLoad, useSeen } from '../hooks';
import { ProjectNav } from '../project-nav';
import type { CaseHistoryItem, FlakyCase, Page } from '../types';
import { Empty, PageTitle, Show, StatusBadge } from '../ui';

/** Runs each case's stats and strip cover (the API's default window). */
export const FLAKY_WINDOW = 30;
const FLAKY_PAGE_SIZE = 25;

export function FlakyPage({ projectId }: { projectId: string }) {
  // The ranking shows at once; each strip then loads its case's history (one request per case),
  // when its row comes into view.
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
                      <CaseHistory testCaseId={c.test_case_id} title={c.title} runs={c.runs} />
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

function CaseHistory({ testCaseId, title, runs }: { testCaseId: string; title: string; runs: number }) {
  const cell = useRef<HTMLDivElement>(null);
  const seen = useSeen(cell);
  const history = useLoad(seen ? `history:${testCaseId}` : null, () =>
    getJson<Page<CaseHistoryItem>>(`/test-cases/${testCaseId}/history`, { window: FLAKY_WINDOW, page_size: FLAKY_WINDOW }),
  );
  return (
    <div ref={cell}>
      {history.state === 'loading' ? (
        <PendingStrip runs={runs} />
      ) : (
        <Show value={history} what="the history">
          {(p) => <HistoryStrip title={title} history={p.items} />}
        </Show>
      )}
    </div>
  );
}

/**
 * The strip's place while its history loads: as many empty squares as the ranking counted runs in
 * the window, so the row keeps its height when the strip arrives (a row that shrank would pull the
 * next ones into view, and their histories would only be asked for then).
 */
function PendingStrip({ runs }: { runs: number }) {
  return (
    <div class="strip" role="status" aria-label="Loading the history">
      {Array.from({ length: runs }, (_, i) => (
        <span key={i} class="square pending" />
      ))}
    </div>
  );
}

/** Pass/fail squares, oldest first; each one links to its run and names it for screen readers. */
export function HistoryStrip({ title, history }: { title: string; history: CaseHistoryItem[] }) {
  const ordered = [...history].reverse();
  const summary = ordered.map((h) => outcomeOf(h.status)).map((o) => (o === 'pass' ? 'P' : o === 'fail' ? 'F' : '·'));
  return (
    <ol class="strip" aria-label={`History of ${title}, oldest first: ${summary.join('')}`}>
      {ordered.map((h) => (
        <li key={h.run_id}>
          <a
            href={`#/runs/${h.run_id}`}
            class={`square ${outcomeOf(h.status)}`}
            title={`${h.run_name}${h.build ? ` (build ${h.build})` : ''}: ${statusLabel(h.status)}, ${dateTime(h.run_created_at)}`}
          >
            <span class="visually-hidden">
              {h.run_name}: {statusLabel(h.status)}
            </span>
          </a>
        </li>
      ))}
    </ol>
  );
}
