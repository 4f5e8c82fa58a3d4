/**
 * The dashboard's only way to the service: the public API under /api/v1 with a bearer token, like
 * any other client. The token lives in sessionStorage (this tab only, gone when it closes), never in
 * a cookie.
 */
import type { Page, Problem } from './types';
import { hasDotSegment } from './paths';

export const API_BASE = '/api/v1';
const TOKEN_KEY = 'tms.dashboard.token';
const USER_KEY = 'tms.dashboard.user';
/** Project names seen in this tab, for breadcrumbs (project-nav.tsx); cleared with the session. */
export const PROJECT_NAMES_KEY = 'tms.dashboard.project-names';

export interface Session {
  token: string;
  username: string;
  displayName: string;
}

export function loadSession(): Session | null {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const user = sessionStorage.getItem(USER_KEY);
  if (!token || !user) return null;
  try {
    const parsed = JSON.parse(user) as { username: string; displayName: string };
    return { token, username: parsed.username, displayName: parsed.displayName };
  } catch {
    return null;
  }
}

function saveSession(s: Session): void {
  sessionStorage.setItem(TOKEN_KEY, s.token);
  sessionStorage.setItem(USER_KEY, JSON.stringify({ username: s.username, displayName: s.displayName }));
}

export function clearSession(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
  sessionStorage.removeItem(PROJECT_NAMES_KEY);
}

/** A failed call: the problem body the API answered with, or one describing a network failure. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title);
  }
  get status(): number {
    return this.problem.status;
  }
}

/** Listeners told when the API refuses the token (expired, revoked): the app signs out. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export type QueryValue = string | number | boolean | null | undefined | Array<string | number>;

/** `?a=1&b=x&b=y`: empty values left out, arrays repeated. */
export function queryString(query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.append(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function problemOf(res: Response): Promise<Problem> {
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      const body = (await res.json()) as Partial<Problem>;
      return {
        status: res.status,
        title: body.title ?? res.statusText,
        detail: body.detail,
        code: body.code,
        errors: body.errors,
      };
    } catch {
      /* not JSON after all: described below */
    }
  }
  return { status: res.status, title: res.statusText || `HTTP ${res.status}` };
}

async function send(path: string, init: RequestInit, token: string | null): Promise<Response> {
  if (hasDotSegment(path)) throw new ApiError({ status: 404, title: 'Not found', detail: 'There is no such page.' });
  const headers = new Headers(init.headers);
  headers.set('Accept', headers.get('Accept') ?? 'application/json');
  if (token) headers.set('Authorization', `Bearer ${token}`);
  let res: Response;
  try {
    res = await fetch(`${API_BASE}${path}`, { ...init, headers, credentials: 'omit' });
  } catch {
    throw new ApiError({ status: 0, title: 'The service cannot be reached', detail: 'Check the network connection and try again.' });
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    if (res.status === 401 && token) for (const l of unauthorizedListeners) l();
    throw new ApiError(problem);
  }
  return res;
}

/** GET `path` (under /api/v1) as JSON with the session's token. */
export async function getJson<T>(path: string, query?: Record<string, QueryValue>): Promise<T> {
  const res = await send(`${path}${queryString(query)}`, { method: 'GET' }, loadSession()?.token ?? null);
  return (await res.json()) as T;
}

/**
 * Every item of a paged list, in order: page 1, then the remaining pages (counted from its `total`)
 * in parallel. For choices that must all be offered, like a filter's names: one page holds at most
 * 200 and would silently leave out the rest.
 */
export async function getAllPages<T>(path: string, query: Record<string, QueryValue> = {}, pageSize = 200): Promise<T[]> {
  const page = (n: number) => getJson<Page<T>>(path, { ...query, page: n, page_size: pageSize });
  const first = await page(1);
  const more = Math.max(0, Math.ceil(first.total / pageSize) - 1);
  const rest = await Promise.all(Array.from({ length: more }, (_, i) => page(i + 2)));
  return [first, ...rest].flatMap((p) => p.items);
}

/**
 * Signs out on the server (every access token of the user is revoked, so a copy of this one stops
 * working too), then forgets the session here. A failure on the server (offline) still signs out
 * here; the token then ends when it expires.
 */
export async function signOutSession(): Promise<void> {
  const token = loadSession()?.token ?? null;
  clearSession();
  if (token === null) return;
  try {
    await send('/auth/logout', { method: 'POST' }, token);
  } catch {
    /* signed out here anyway */
  }
}

/** GET `path` as a file (exports): the body and the file name the service suggests. */
export async function getFile(path: string, query?: Record<string, QueryValue>): Promise<{ blob: Blob; filename: string }> {
  const res = await send(`${path}${queryString(query)}`, { method: 'GET', headers: { Accept: '*/*' } }, loadSession()?.token ?? null);
  const disposition = res.headers.get('content-disposition') ?? '';
  const match = /filename="?([^";]+)"?/i.exec(disposition);
  return { blob: await res.blob(), filename: match?.[1] ?? 'export' };
}

interface LoginResponse {
  access_token: string;
  user: { username: string; display_name: string | null };
}

/** POST /auth/login; the token is kept for this tab only. */
export async function signIn(username: string, password: string): Promise<Session> {
  const res = await send(
    '/auth/login',
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password }) },
    null,
  );
  const body = (await res.json()) as LoginResponse;
  const session = { token: body.access_token, username: body.user.username, displayName: body.user.display_name ?? body.user.username };
  saveSession(session);
  return session;
}
