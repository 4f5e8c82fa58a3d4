import { getJson } from './api';
import { useLoad } from './hooks';
import type { Project } from './types';

const TABS = [
  ['runs', 'Runs'],
  ['flaky', 'Flaky tests'],
  ['environments', 'Environments'],
  ['products', 'Products'],
] as const;

const names = new Map<string, Promise<Project>>();

/** The project's name (asked once per project and tab). */
export function loadProject(projectId: string): Promise<Project> {
  let p = names.get(projectId);
  if (!p) {
    p = getJson<Project>(`/projects/${projectId}`);
    p.catch(() => names.delete(projectId));
    names.set(projectId, p);
  }
  return p;
}

/** Breadcrumb and the project's pages; `current` is marked for assistive technology. */
export function ProjectNav({ projectId, current }: { projectId: string; current?: (typeof TABS)[number][0] }) {
  const project = useLoad(`project:${projectId}`, () => loadProject(projectId));
  const name = project.state === 'done' ? project.data.name : 'Project';
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
