import type { ChartConfiguration } from 'chart.js';
import { useMemo, useState } from 'preact/hooks';
import { getFile, getJson } from '../api';
import { ChartCanvas, preloadChart } from '../chart';
import { changeLabel, dateTime, percent, STATUS_COLOURS, statusLabel } from '../format';
import { asProblem, type Loaded, useLoad } from '../hooks';
import { ProjectNav } from '../project-nav';
import { navigate, pageParam, pageValue } from '../router';
import { CHANGE_CLASSES, type Page, type Problem, type RunCase, type RunComparison, type TestRun } from '../types';
import { Empty, Figures, PageTitle, Pager, PastTheEnd, ProblemMessage, Show, StatusBadge } from '../ui';

/** Items per page of the run's table (the runs list shows as many runs). */
const ITEMS_PAGE_SIZE = 50;
/** What the page shows of the run (sparse fields: not its environment snapshot). */
const RUN_FIELDS =
  'id,project_id,name,status,environment_id,environment_name,environment_revision_number,build,ci,created_by_name,created_at,summary,status_breakdown';
/** Changed items the comparison lists (the counts cover all of them). */
const COMPARE_PAGE_SIZE = 50;
const EXPORT_FORMATS = [
  ['csv', 'CSV'],
  ['junit', 'JUnit XML'],
  ['json', 'JSON'],
  ['xml', 'XML'],
  ['pdf', 'PDF'],
] as const;

export function RunPage({ runId, query }: { runId: string; query: URLSearchParams }) {
  const run = useLoad(`run:${runId}`, () => getJson<TestRun>(`/test-runs/${runId}`, { fields: RUN_FIELDS }));
  const comparing = query.get('compare') === 'previous';
  const failingOnly = query.get('failing') === '1';
  const page = pageParam(query);
  const items = useLoad(`items:${runId}:${page}:${failingOnly}`, () =>
    getJson<Page<RunCase>>('/run-cases', {
      test_run_id: runId,
      page,
      page_size: ITEMS_PAGE_SIZE,
      // Ascending status text puts blocked, error and failure first (descending put them last).
      sort_by: 'status',
      sort_order: 'asc',
      status: failingOnly ? ['failure', 'error'] : undefined,
    }),
  );
  // Asked at once with the run and its items, not after the run arrived.
  const cmp = useLoad(comparing ? `compare:${runId}` : null, () =>
    // Only the items that changed are listed; the counts cover every class anyway.
    getJson<RunComparison>(`/test-runs/${runId}/compare`, {
      base: 'previous',
      page_size: COMPARE_PAGE_SIZE,
      change: CHANGE_CLASSES.filter((c) => c !== 'unchanged'),
    }),
  );
  void preloadChart(); // the status chart's Chart.js arrives while the run loads
  const go = (next: Record<string, string | undefined>) =>
    navigate(`/runs/${runId}`, {
      compare: comparing ? 'previous' : undefined,
      failing: failingOnly ? '1' : undefined,
      page: pageValue(page),
      ...next,
    });

  if (run.state !== 'done') {
    return (
      <>
        <PageTitle>Test run</PageTitle>
        <Show value={run} what="the run">
          {() => null}
        </Show>
      </>
    );
  }
  const r = run.data;
  const s = r.summary;
  return (
    <>
      <ProjectNav projectId={r.project_id} current="runs" />
      <PageTitle sub={<RunMeta run={r} />}>{r.name}</PageTitle>
      <Figures
        label="Run summary"
        items={[
          ['Items', s.total],
          ['Passed', s.passed],
          ['Failed', s.failure],
          ['Errors', s.error],
          ['Skipped', s.skipped],
          ['Blocked', s.blocked],
          ['Untested', s.untested],
          ['Pass rate', percent(s.pass_rate)],
        ]}
      />
      <div class="columns">
        <section aria-labelledby="status-title">
          <h2 id="status-title">Results by status</h2>
          <StatusChart run={r} />
        </section>
        <section aria-labelledby="actions-title">
          <h2 id="actions-title">Export and compare</h2>
          <Exports runId={r.id} />
          <p>
            <button type="button" class="primary" aria-pressed={comparing} onClick={() => go({ compare: comparing ? undefined : 'previous' })}>
              {comparing ? 'Hide the comparison' : 'Compare with previous'}
            </button>
          </p>
        </section>
      </div>
      {comparing ? <Comparison cmp={cmp} /> : null}
      <section aria-labelledby="items-title">
        <h2 id="items-title">Items</h2>
        <label class="inline">
          <input type="checkbox" checked={failingOnly} onChange={() => go({ failing: failingOnly ? undefined : '1', page: undefined })} /> Only failures and
          errors
        </label>
        <Show value={items} what="items">
          {(p) =>
            p.total === 0 ? (
              <Empty>{failingOnly ? 'Nothing failed in this run.' : 'This run has no items yet.'}</Empty>
            ) : p.items.length === 0 ? (
              <PastTheEnd page={p.page} total={p.total} pageSize={p.page_size} onPage={(n) => go({ page: pageValue(n) })} />
            ) : (
              <>
                <ItemsTable items={p.items} />
                <Pager page={p.page} hasNext={p.has_next} total={p.total} onPage={(n) => go({ page: pageValue(n) })} />
              </>
            )
          }
        </Show>
      </section>
    </>
  );
}

function RunMeta({ run }: { run: TestRun }) {
  const parts = [
    statusLabel(run.status),
    run.environment_name ? `environment ${run.environment_name} (rev. ${run.environment_revision_number ?? '?'})` : 'no environment',
    run.build ? `build ${run.build}` : null,
    run.ci?.branch ? `branch ${run.ci.branch}` : null,
    `created ${dateTime(run.created_at)}${run.created_by_name ? ` by ${run.created_by_name}` : ''}`,
  ];
  return <>{parts.filter(Boolean).join(' · ')}</>;
}

function StatusChart({ run }: { run: TestRun }) {
  const items = run.status_breakdown.items.filter((i) => i.count > 0);
  const config = useMemo<ChartConfiguration>(
    () => ({
      type: 'doughnut',
      data: {
        labels: items.map((i) => statusLabel(i.status)),
        datasets: [{ data: items.map((i) => i.count), backgroundColor: items.map((i) => STATUS_COLOURS[i.status]) }],
      },
      options: { plugins: { legend: { position: 'right' } } },
    }),
    [run],
  );
  if (items.length === 0) return <Empty>No results yet.</Empty>;
  return (
    <>
      <ChartCanvas config={config} label={`Results: ${items.map((i) => `${i.count} ${statusLabel(i.status).toLowerCase()}`).join(', ')}`} height={220} />
    </>
  );
}

function Exports({ runId }: { runId: string }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const download = async (format: string) => {
    setBusy(format);
    setProblem(null);
    try {
      const { blob, filename } = await getFile(`/test-runs/${runId}/export`, { format });
      // The export needs the bearer token, so it is fetched here and handed over as a file.
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setProblem(asProblem(err));
    } finally {
      setBusy(null);
    }
  };
  return (
    <div class="exports">
      <ul class="buttons" aria-label="Export the run report">
        {EXPORT_FORMATS.map(([format, label]) => (
          <li key={format}>
            <button type="button" onClick={() => void download(format)} disabled={busy !== null}>
              {busy === format ? `Exporting ${label}…` : `Export ${label}`}
            </button>
          </li>
        ))}
      </ul>
      {problem ? <ProblemMessage problem={problem} /> : null}
    </div>
  );
}

function Comparison({ cmp }: { cmp: Loaded<RunComparison> }) {
  return (
    <section aria-labelledby="compare-title" class="comparison">
      <h2 id="compare-title">Compared with the previous run</h2>
      <Show value={cmp} what="the comparison">
        {(c) => (
          <>
            <p>
              Base: <a href={`#/runs/${c.base.id}`}>{c.base.name}</a> ({c.base.build ? `build ${c.base.build}, ` : ''}
              {dateTime(c.base.created_at)}).
              {c.build_changed ? ' The build changed.' : ' Same build.'}
              {c.environment?.changed
                ? ` The environment changed (revision ${c.environment.from_revision ?? '?'} → ${c.environment.to_revision ?? '?'}).`
                : c.environment
                  ? ' The environment did not change.'
                  : ''}
            </p>
            <Figures label="Changes by class" items={CHANGE_CLASSES.map((k) => [changeLabel(k), c.counts[k] ?? 0])} />
            {c.items.filter((i) => i.change !== 'unchanged').length === 0 ? (
              <Empty>Nothing changed between the two runs.</Empty>
            ) : (
              <table>
                <caption class="visually-hidden">Changed items</caption>
                <thead>
                  <tr>
                    <th scope="col">Test case</th>
                    <th scope="col">Change</th>
                    <th scope="col">Before</th>
                    <th scope="col">Now</th>
                  </tr>
                </thead>
                <tbody>
                  {c.items
                    .filter((i) => i.change !== 'unchanged')
                    .map((i) => (
                      <tr key={i.test_case_id}>
                        <th scope="row">{i.title}</th>
                        <td>
                          <span class={`badge change-${i.change}`}>{changeLabel(i.change)}</span>
                        </td>
                        <td>{i.base_status ? <StatusBadge status={i.base_status} /> : '—'}</td>
                        <td>{i.status ? <StatusBadge status={i.status} /> : '—'}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            )}
            {c.has_next ? <p>Only the first {COMPARE_PAGE_SIZE} changed items are listed ({c.total} in all).</p> : null}
          </>
        )}
      </Show>
    </section>
  );
}

function ItemsTable({ items }: { items: RunCase[] }) {
  return (
    <table class="items">
      <caption class="visually-hidden">Run items</caption>
      <thead>
        <tr>
          <th scope="col">Test case</th>
          <th scope="col">Suite</th>
          <th scope="col">Result</th>
          <th scope="col" class="num">
            Rows passed
          </th>
          <th scope="col">Message</th>
        </tr>
      </thead>
      <tbody>
        {items.map((i) => (
          <tr key={i.id}>
            <th scope="row">
              {i.test_case_key ? <span class="key">{i.test_case_key}</span> : null} {i.test_case_title}
            </th>
            <td>{i.suite_name ?? '—'}</td>
            <td>
              <StatusBadge status={i.status} />
            </td>
            <td class="num">
              {i.rows_passed}/{i.rows_total}
            </td>
            <td>{i.comment ? <pre class="message">{i.comment}</pre> : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
