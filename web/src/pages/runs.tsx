import type { ChartConfiguration } from 'chart.js';
import { useMemo, useState } from 'preact/hooks';
import { getAllPages, getJson, type QueryValue } from '../api';
import { ChartCanvas, preloadChart } from '../chart';
import { dateTime, percent, statusLabel } from '../format';
import { useLoad } from '../hooks';
import { ProjectNav } from '../project-nav';
import { navigate, pageParam, pageValue } from '../router';
import { type Environment, type Page, RUN_STATUSES, type TestRun } from '../types';
import { Empty, PageTitle, Pager, PastTheEnd, Show, StatusBadge } from '../ui';

/** Runs in the pass-rate trend (the newest ones matching the filters). */
export const TREND_RUNS = 50;
/** The fields the list shows (sparse fields: no environment snapshot is read or sent). */
const LIST_FIELDS = 'id,name,status,environment_id,environment_name,environment_revision_number,build,ci,summary,created_at';
const FILTERS = ['status', 'environment_id', 'build', 'branch'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
type EnvironmentName = Pick<Environment, 'id' | 'name'>;

export function RunsPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const filters: Filters = { status: '', environment_id: '', build: '', branch: '' };
  for (const f of FILTERS) filters[f] = query.get(f) ?? '';
  const page = pageParam(query);
  const apiQuery: Record<string, QueryValue> = { project_id: projectId, ...filters, sort_by: 'created_at', sort_order: 'desc' };
  const key = JSON.stringify(apiQuery);
  void preloadChart(); // the trend's Chart.js arrives while the runs load

  // The table's first page is the trend's runs: one request (a second one on later pages).
  const list = (p: number) => () => getJson<Page<TestRun>>('/test-runs', { ...apiQuery, fields: LIST_FIELDS, page: p, page_size: TREND_RUNS });
  const runs = useLoad(`${key}|${page}`, list(page));
  const laterTrend = useLoad(page === 1 ? null : key, list(1));
  const trend = page === 1 ? runs : laterTrend;
  // The environment filter's choices (names only, no topologies) are not on screen until the list
  // is opened: asked for when the filter is first used, or at once when the address filters by one.
  // Every page of them, not only the first 200 names: any environment can be chosen.
  const [wantEnvironments, setWantEnvironments] = useState(filters.environment_id !== '');
  const environments = useLoad(wantEnvironments ? `envs:${projectId}` : null, () =>
    getAllPages<EnvironmentName>('/environments', { project_id: projectId, include_archived: true, fields: 'id,name' }),
  );

  const go = (next: Partial<Filters>, nextPage = 1) =>
    navigate(`/projects/${projectId}/runs`, { ...filters, ...next, page: pageValue(nextPage) });

  return (
    <>
      <ProjectNav projectId={projectId} current="runs" />
      <PageTitle sub="Newest first. Archived runs are hidden unless the status filter asks for them.">Test runs</PageTitle>
      <RunFilters
        filters={filters}
        environments={environments.state === 'done' ? environments.data : []}
        onEnvironmentsWanted={() => setWantEnvironments(true)}
        onApply={(f) => go(f)}
      />
      <section aria-labelledby="trend-title">
        <h2 id="trend-title">Pass rate, last {TREND_RUNS} runs</h2>
        <Show value={trend} what="the trend">
          {(p) => (p.items.length === 0 ? <Empty>No runs to draw.</Empty> : <Trend runs={p.items} />)}
        </Show>
      </section>
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        <Show value={runs} what="runs">
          {(p) =>
            p.total === 0 ? (
              <Empty>No runs match these filters.</Empty>
            ) : p.items.length === 0 ? (
              <PastTheEnd page={p.page} total={p.total} pageSize={p.page_size} onPage={(n) => go({}, n)} />
            ) : (
              <>
                <RunsTable runs={p.items} />
                <Pager page={p.page} hasNext={p.has_next} total={p.total} onPage={(n) => go({}, n)} />
              </>
            )
          }
        </Show>
      </section>
    </>
  );
}

function RunFilters({
  filters,
  environments,
  onEnvironmentsWanted,
  onApply,
}: {
  filters: Filters;
  environments: EnvironmentName[];
  onEnvironmentsWanted: () => void;
  onApply: (f: Filters) => void;
}) {
  const [draft, setDraft] = useState(filters);
  const set = (name: keyof Filters) => (e: Event) => setDraft({ ...draft, [name]: (e.currentTarget as HTMLInputElement).value });
  return (
    <form
      class="filters"
      aria-label="Filter runs"
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ ...draft, build: draft.build.trim(), branch: draft.branch.trim() });
      }}
    >
      <label>
        Status
        <select name="status" value={draft.status} onChange={set('status')}>
          <option value="">Any but archived</option>
          {RUN_STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusLabel(s)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Environment
        <select
          name="environment_id"
          value={draft.environment_id}
          onChange={set('environment_id')}
          // Its choices load when a pointer comes near or the list takes focus, before it opens.
          onPointerEnter={onEnvironmentsWanted}
          onFocus={onEnvironmentsWanted}
        >
          <option value="">Any</option>
          {environments.map((e) => (
            <option key={e.id} value={e.id}>
              {e.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Build
        <input name="build" value={draft.build} onInput={set('build')} placeholder="exact build" />
      </label>
      <label>
        Branch
        <input name="branch" value={draft.branch} onInput={set('branch')} placeholder="exact branch" />
      </label>
      <button type="submit" class="primary">
        Apply filters
      </button>
    </form>
  );
}

function Trend({ runs }: { runs: TestRun[] }) {
  const config = useMemo<ChartConfiguration>(() => {
    const ordered = [...runs].reverse();
    return {
      type: 'line',
      data: {
        labels: ordered.map((r) => r.build ?? r.name),
        datasets: [
          {
            label: 'Pass rate (%)',
            data: ordered.map((r) => r.summary.pass_rate),
            borderColor: '#1a7f37',
            backgroundColor: 'rgba(26, 127, 55, 0.12)',
            fill: true,
            tension: 0.2,
          },
        ],
      },
      options: { scales: { y: { min: 0, max: 100, title: { display: true, text: '%' } } }, plugins: { legend: { display: false } } },
    };
  }, [runs]);
  const first = runs[runs.length - 1];
  const last = runs[0];
  return (
    <ChartCanvas
      config={config}
      label={`Pass rate over the last ${runs.length} runs, from ${percent(first.summary.pass_rate)} (${first.name}) to ${percent(last.summary.pass_rate)} (${last.name})`}
    />
  );
}

function RunsTable({ runs }: { runs: TestRun[] }) {
  return (
    <table class="runs">
      <caption class="visually-hidden">Runs</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          <th scope="col">Environment</th>
          <th scope="col">Build</th>
          <th scope="col">Branch</th>
          <th scope="col" class="num">
            Items
          </th>
          <th scope="col" class="num">
            Failed
          </th>
          <th scope="col" class="num">
            Pass rate
          </th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.id}>
            <th scope="row">
              <a href={`#/runs/${r.id}`}>{r.name}</a>
            </th>
            <td>
              <StatusBadge status={r.status} />
            </td>
            <td>{r.environment_name ? `${r.environment_name} (rev. ${r.environment_revision_number ?? '?'})` : '—'}</td>
            <td>{r.build ?? '—'}</td>
            <td>{r.ci?.branch ?? '—'}</td>
            <td class="num">{r.summary.total}</td>
            <td class="num">{r.summary.failure + r.summary.error}</td>
            <td class="num">{percent(r.summary.pass_rate)}</td>
            <td>{dateTime(r.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
