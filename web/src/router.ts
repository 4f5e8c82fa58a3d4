/** Hash routes (`#/projects/<id>/runs?status=completed`): the service serves one page, /app/. */
import { useEffect, useState } from 'preact/hooks';
import { decodeSegment } from './paths';

export interface Route {
  /** Path segments after `#/`. */
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path, search = ''] = raw.split('?', 2);
  return { parts: path.split('/').filter(Boolean).map(decodeSegment), query: new URLSearchParams(search) };
}


/** The 1-based page number a list's address asks for (`?page=3`): 1 when absent or not a number. */
export function pageParam(query: URLSearchParams, name = 'page'): number {
  return Math.max(1, Math.trunc(Number(query.get(name))) || 1);
}

/** The address's value for page `n` ({@link pageParam}'s inverse): none for the first page. */
export function pageValue(n: number): string | undefined {
  return n > 1 ? String(n) : undefined;
}

export function href(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const s = params.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export function navigate(path: string, query?: Record<string, string | undefined>): void {
  window.location.hash = href(path, query).slice(1);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
