import { getJson } from '../api';
import { dateTime } from '../format';
import { useLoad } from '../hooks';
import { rememberProjects } from '../project-nav';
import { navigate, pageParam, pageValue } from '../router';
import type { Page, Project } from '../types';
import { Empty, PageTitle, Pager, PastTheEnd, Show } from '../ui';

/** The user's projects by name, 200 a page (`?page=`), so that none is out of reach. */
export function ProjectsPage({ query }: { query: URLSearchParams }) {
  const pageNumber = pageParam(query);
  const projects = useLoad(`projects:${pageNumber}`, async () => {
    const page = await getJson<Page<Project>>('/projects', { page: pageNumber, page_size: 200, sort_by: 'name', sort_order: 'asc' });
    rememberProjects(page.items);
    return page;
  });
  const go = (n: number) => navigate('/projects', { page: pageValue(n) });
  return (
    <>
      <PageTitle sub="The projects you are a member of.">Projects</PageTitle>
      <Show value={projects} what="projects">
        {(page) =>
          page.total === 0 ? (
            <Empty>You are not a member of any project yet. A project lead or an administrator can add you.</Empty>
          ) : page.items.length === 0 ? (
            <PastTheEnd page={page.page} total={page.total} pageSize={page.page_size} onPage={go} />
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Projects</caption>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                    <th scope="col">Pages</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((p) => (
                    <tr key={p.id}>
                      <th scope="row">
                        <a href={`#/projects/${p.id}/runs`}>{p.name}</a>
                      </th>
                      <td>{p.description ?? '—'}</td>
                      <td>{dateTime(p.created_at)}</td>
                      <td class="links">
                        <a href={`#/projects/${p.id}/flaky`} aria-label={`Flaky tests of ${p.name}`}>
                          Flaky tests
                        </a>{' '}
                        <a href={`#/projects/${p.id}/environments`} aria-label={`Environments of ${p.name}`}>
                          Environments
                        </a>{' '}
                        <a href={`#/projects/${p.id}/products`} aria-label={`Products of ${p.name}`}>
                          Products
                        </a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={page.page} hasNext={page.has_next} total={page.total} onPage={go} />
            </>
          )
        }
      </Show>
    </>
  );
}
