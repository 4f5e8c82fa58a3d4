import { useLayoutEffect, useState } from 'preact/hooks';
import { ApiError } from './api';
import type { Problem } from './types';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; problem: Problem }
  | { state: 'done'; data: T };

export function asProblem(err: unknown): Problem {
  if (err instanceof ApiError) return err.problem;
  return { status: 0, title: 'Something went wrong', detail: err instanceof Error ? err.message : String(err) };
}

/**
 * Runs `load` when `key` changes (a string naming what is loaded) and keeps the latest answer; an
 * answer for an older key is dropped. The request starts as soon as the page is rendered (a layout
 * effect), not after the browser has painted it (an effect waits for that): on a first load (full
 * bench scale, bench/page-loads.ts) the pages' first API calls started 84-100 ms after navigation
 * with an effect, 44-53 ms with a layout effect.
 */
export function useLoad<T>(key: string | null, load: () => Promise<T>): Loaded<T> {
  const [result, setResult] = useState<{ key: string | null; value: Loaded<T> }>({ key: null, value: { state: 'loading' } });
  useLayoutEffect(() => {
    if (key === null) return;
    let live = true;
    setResult({ key, value: { state: 'loading' } });
    load().then(
      (data) => live && setResult({ key, value: { state: 'done', data } }),
      (err: unknown) => live && setResult({ key, value: { state: 'error', problem: asProblem(err) } }),
    );
    return () => {
      live = false;
    };
    // `load` is a fresh closure each render; `key` says when it loads something else.
  }, [key]);
  return result.key === key ? result.value : { state: 'loading' };
}
