import { getJson, loadSession, PROJECT_NAMES_KEY } from './api';
import { useLoad } from './hooks';
import type { Project } from './types';

const TABS = [
  ['runs', 'Runs'],
  ['flaky', 'Flaky tests'],
  ['environments', 'Environments'],
  ['products', 'Products'],
] as const;

/** Projects asked for in this tab, by session token and project id (a new sign-in asks again). */
const names = new Map<string, Promise<Project>>();

function knownNames(): Record<string, string> {
  try {
    return JSON.parse(sessionStorage.getItem(PROJECT_NAMES_KEY) ?? '{}') as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * Keeps project names for the breadcrumb: a page of a run, an environment or a product learns its
 * project only from its own answer, and asking for the name then would be a second round trip after
 * the first. The projects page refreshes them every time it lists the projects.
 */
export function rememberProjects(projects: Array<Pick<Project, 'id' | 'name'>>): void {
  const known = knownNames();
  for (const p of projects) known[p.id] = p.name;
  try {
    sessionStorage.setItem(PROJECT_NAMES_KEY, JSON.stringify(known));
  } catch {
    /* storage full or refused: the breadcrumb asks the API instead */
  }
}

/**
 * The project (asked once per project, tab and session: the answer of another user's session is
 * never reused, and a refused one is asked again).
 */
export function loadProject(projectId: string): Promise<Project> {
  const key = `${loadSession()?.token ?? ''}\n${projectId}`;
  let p = names.get(key);
  if (!p) {
    p = getJson<Project>(`/projects/${projectId}`);
    p.then((project) => rememberProjects([project]), () => names.delete(key));
    names.set(key, p);
  }
  return p;
}

/**
 * Breadcrumb and the project's pages; `current` is marked for assistive technology. A name stored
 * in this tab is shown without asking (a renamed project shows its new name once the projects page
 * has listed it again); any other is asked for.
 */
export function ProjectNav({ projectId, current }: { projectId: string; current?: (typeof TABS)[number][0] }) {
  const known = knownNames()[projectId];
  const project = useLoad(known === undefined ? `project:${projectId}` : null, () => loadProject(projectId));
  const name = known ?? (project.state === 'done' ? project.data.name : 'Project');
  return (
    <nav class="project-nav" aria-label="Project">
      <ol class="breadcrumb">
        <li>
          <a href="#/projects">Projects</a>
        </li>
        <li>
          <a href={`#/projects/${projectId}/runs`}>{name}</a>
        </li>
      </ol>
      <ul class="tabs">
        {TABS.map(([path, label]) => (
          <li key={path}>
            <a href={`#/projects/${projectId}/${path}`} aria-current={current === path ? 'page' : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
