import { useState } from 'preact/hooks';
import { getJson } from '../api';
import { dateTime, jsonPath, shortValue } from '../format';
import { type Loaded, useLoad } from '../hooks';
import { ProjectNav } from '../project-nav';
import { navigate, pageParam, pageValue } from '../router';
import type { Environment, EnvironmentRevision, Page, RevisionDiff, Topology, TopologyComponent } from '../types';
import { Empty, PageTitle, Pager, PastTheEnd, Show } from '../ui';

const PAGE_SIZE = 200;
/** What the list shows of each environment (sparse fields: no topology, the bulk of one). */
const LIST_FIELDS = 'id,name,kind,status,archived_at,current_revision_number,use_cases';

/** The project's environments, 200 a page (`?page=`), so that none is out of reach. */
export function EnvironmentsPage({ projectId, query }: { projectId: string; query: URLSearchParams }) {
  const page = pageParam(query);
  const envs = useLoad(`envs:${projectId}:${page}`, () =>
    getJson<Page<Environment>>('/environments', { project_id: projectId, page, page_size: PAGE_SIZE, include_archived: true, fields: LIST_FIELDS }),
  );
  const go = (n: number) => navigate(`/projects/${projectId}/environments`, { page: pageValue(n) });
  return (
    <>
      <ProjectNav projectId={projectId} current="environments" />
      <PageTitle sub="Where the runs ran: topology and the revisions of each environment.">Environments</PageTitle>
      <Show value={envs} what="environments">
        {(p) =>
          p.total === 0 ? (
            <Empty>This project has no environments yet.</Empty>
          ) : p.items.length === 0 ? (
            <PastTheEnd page={p.page} total={p.total} pageSize={p.page_size} onPage={go} />
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Environments</caption>
                <thead>
                  <tr>
                    <th scope="col">Environment</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Revision
                    </th>
                    <th scope="col">Use cases</th>
                  </tr>
                </thead>
                <tbody>
                  {p.items.map((e) => (
                    <tr key={e.id}>
                      <th scope="row">
                        <a href={`#/environments/${e.id}`}>{e.name}</a>
                      </th>
                      <td>{e.kind ?? '—'}</td>
                      <td>{e.archived_at ? 'archived' : e.status}</td>
                      <td class="num">{e.current_revision_number}</td>
                      <td>{e.use_cases.join(', ') || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={p.page} hasNext={p.has_next} total={p.total} onPage={go} />
            </>
          )
        }
      </Show>
    </>
  );
}

/**
 * An environment: its topology, its revisions (200 a page, `?rev_page=`) and the drift between two
 * revisions (`?from=&to=`); the two parameters are kept when the other changes.
 */
export function EnvironmentPage({ environmentId, query }: { environmentId: string; query: URLSearchParams }) {
  const revPage = pageParam(query, 'rev_page');
  const env = useLoad(`env:${environmentId}`, () => getJson<Environment>(`/environments/${environmentId}`));
  const revisions = useLoad(`revs:${environmentId}:${revPage}`, () =>
    getJson<Page<EnvironmentRevision>>(`/environments/${environmentId}/revisions`, { page: revPage, page_size: PAGE_SIZE }),
  );
  // The drift shown first (the newest revision against the one before, unless the address names
  // others) needs only the current revision number: asked as soon as the environment arrives,
  // alongside the revisions.
  const current = env.state === 'done' ? env.data.current_revision_number : null;
  const to = Number(query.get('to')) || (current ?? 1);
  const from = Number(query.get('from')) || Math.max(1, to - 1);
  const diff = useLoad(current !== null && current > 1 ? `diff:${environmentId}:${from}:${to}` : null, () =>
    getJson<RevisionDiff>(`/environments/${environmentId}/revisions/${to}/diff`, { against: from }),
  );
  // The address with `changes`, the rest kept: a page of revisions keeps the drift shown, and back.
  const go = (changes: Record<string, string | undefined>) => navigate(`/environments/${environmentId}`, { ...Object.fromEntries(query), ...changes });
  if (env.state !== 'done') {
    return (
      <>
        <PageTitle>Environment</PageTitle>
        <Show value={env} what="the environment">
          {() => null}
        </Show>
      </>
    );
  }
  const e = env.data;
  return (
    <>
      <ProjectNav projectId={e.project_id} current="environments" />
      <PageTitle sub={[e.kind, e.archived_at ? 'archived' : e.status, `revision ${e.current_revision_number}`].filter(Boolean).join(' · ')}>
        {e.name}
      </PageTitle>
      {e.description ? <p>{e.description}</p> : null}
      <section aria-labelledby="topology-title">
        <h2 id="topology-title">Topology</h2>
        <TopologyTree topology={e.topology} />
      </section>
      <section aria-labelledby="revisions-title">
        <h2 id="revisions-title">Revisions</h2>
        <Show value={revisions} what="revisions">
          {(p) =>
            p.items.length === 0 && p.total > 0 ? (
              <PastTheEnd page={p.page} total={p.total} pageSize={p.page_size} onPage={(n) => go({ rev_page: pageValue(n) })} />
            ) : (
            <>
              <table>
                <caption class="visually-hidden">Revisions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col" class="num">
                      Revision
                    </th>
                    <th scope="col">Created</th>
                    <th scope="col">Note</th>
                    <th scope="col">Snapshot hash</th>
                  </tr>
                </thead>
                <tbody>
                  {p.items.map((r) => (
                    <tr key={r.id}>
                      <td class="num">
                        {r.revision_number}
                        {r.is_current ? ' (current)' : ''}
                      </td>
                      <td>{dateTime(r.created_at)}</td>
                      <td>{r.revision_note ?? '—'}</td>
                      <td>
                        <code>{r.snapshot_hash.slice(0, 12)}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={p.page} hasNext={p.has_next} total={p.total} onPage={(n) => go({ rev_page: pageValue(n) })} />
            </>
            )
          }
        </Show>
      </section>
      <Drift current={e.current_revision_number} from={from} to={to} diff={diff} onShow={(d) => go({ from: String(d.from), to: String(d.to) })} />
    </>
  );
}

const GROUPS: Array<[keyof Topology, string]> = [
  ['system_under_test', 'System under test'],
  ['supporting_services', 'Supporting services'],
  ['load_generators', 'Load generators'],
];

/** The topology as nested lists: group → component → nodes. */
export function TopologyTree({ topology }: { topology: Topology | null }) {
  const groups = GROUPS.map(([key, label]) => [label, (topology?.[key] as TopologyComponent[] | undefined) ?? []] as const).filter(
    ([, comps]) => comps.length > 0,
  );
  if (groups.length === 0) return <Empty>No topology recorded.</Empty>;
  return (
    <ul class="tree" aria-label="Topology">
      {groups.map(([label, comps]) => (
        <li key={label}>
          <span class="tree-group">{label}</span>
          <ul>
            {comps.map((c, i) => (
              <li key={`${c.name}-${i}`}>
                <span class="tree-component">{c.name}</span>
                {c.component_type ? <span class="muted"> ({c.component_type})</span> : null}
                {c.endpoints && c.endpoints.length > 0 ? <span class="muted"> · {c.endpoints.join(', ')}</span> : null}
                {c.nodes && c.nodes.length > 0 ? (
                  <ul>
                    {c.nodes.map((n, j) => (
                      <li key={`${n.name}-${j}`}>
                        <span class="tree-node">{n.name}</span>
                        <span class="muted">
                          {' '}
                          {[n.role, n.host_type, n.provider, n.region, n.count && n.count > 1 ? `×${n.count}` : null, n.endpoint]
                            .filter(Boolean)
                            .join(' · ')}
                        </span>
                      </li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/**
 * The drift between any two revisions. Their choices are `current` down to 1, not the revisions
 * listed above (one page of them): an environment's revisions are numbered 1, 2, 3… without a gap
 * (each one the previous + 1, under a lock on the environment), and none is ever deleted.
 */
function Drift({
  current,
  from,
  to,
  diff,
  onShow,
}: {
  current: number;
  from: number;
  to: number;
  diff: Loaded<RevisionDiff>;
  onShow: (d: { from: number; to: number }) => void;
}) {
  const numbers = Array.from({ length: current }, (_, i) => current - i);
  const [draft, setDraft] = useState({ from, to });
  return (
    <section aria-labelledby="drift-title">
      <h2 id="drift-title">Drift between two revisions</h2>
      {current < 2 ? (
        <Empty>Only one revision so far: nothing to compare.</Empty>
      ) : (
        <>
          <form
            class="filters"
            aria-label="Choose the revisions to compare"
            onSubmit={(ev) => {
              ev.preventDefault();
              onShow(draft);
            }}
          >
            <label>
              From revision
              <select name="from" value={String(draft.from)} onChange={(ev) => setDraft({ ...draft, from: Number(ev.currentTarget.value) })}>
                {numbers.map((n) => (
                  <option key={n} value={String(n)}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <label>
              To revision
              <select name="to" value={String(draft.to)} onChange={(ev) => setDraft({ ...draft, to: Number(ev.currentTarget.value) })}>
                {numbers.map((n) => (
                  <option key={n} value={String(n)}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" class="primary">
              Show the drift
            </button>
          </form>
          <Show value={diff} what="the diff">
            {(d) =>
              d.identical ? (
                <Empty>
                  Revisions {d.from_revision} and {d.to_revision} are identical.
                </Empty>
              ) : (
                <>
                  <p>
                    From revision {d.from_revision} to {d.to_revision}: {d.counts.added} added, {d.counts.removed} removed, {d.counts.changed} changed.
                  </p>
                  <table class="diff">
                    <caption class="visually-hidden">
                      Changes from revision {d.from_revision} to {d.to_revision}
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">Change</th>
                        <th scope="col">Path</th>
                        <th scope="col">Before</th>
                        <th scope="col">After</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.changes.map((c, i) => (
                        <tr key={i} class={`op-${c.op}`}>
                          <td>
                            <span class={`badge op-${c.op}`}>{c.op}</span>
                          </td>
                          <th scope="row">
                            <code>{jsonPath(c.path)}</code>
                          </th>
                          <td>
                            <code>{c.op === 'added' ? '—' : shortValue(c.from)}</code>
                          </td>
                          <td>
                            <code>{c.op === 'removed' ? '—' : shortValue(c.to)}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </>
              )
            }
          </Show>
        </>
      )}
    </section>
  );
}
