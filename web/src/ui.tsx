/** Shared pieces: headings that take focus, loading/empty/problem states, badges, figures. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { problemMessage, statusLabel } from './format';
import type { Loaded } from './hooks';
import type { Problem } from './types';

/** The page's h1; focused when the page opens so keyboard and screen reader users start there. */
export function PageTitle({ children, sub }: { children: ComponentChildren; sub?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus({ preventScroll: false });
  }, []);
  return (
    <header class="page-title">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {sub ? <p class="subtitle">{sub}</p> : null}
    </header>
  );
}

export function ProblemMessage({ problem }: { problem: Problem }) {
  return (
    <div class="problem" role="alert">
      <strong>{problem.status ? `Error ${problem.status}` : 'Error'}</strong>{' '}
      <span>{problemMessage(problem)}</span>
      {problem.code ? <span class="code"> ({problem.code})</span> : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/**
 * An empty page of a list that is not empty (an address asking for a page past the end, or the
 * last page emptied meanwhile): says so and leads to the list's last page.
 */
export function PastTheEnd({ page, total, pageSize, onPage }: { page: number; total: number; pageSize: number; onPage: (p: number) => void }) {
  const last = Math.max(1, Math.ceil(total / Math.max(1, pageSize)));
  return (
    <Empty>
      Page {page} is past the end ({total} in all).{' '}
      <button type="button" onClick={() => onPage(last)}>
        Go to page {last}
      </button>
    </Empty>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Renders a loaded value, or its loading state or problem. */
export function Show<T>({ value, what, children }: { value: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (value.state === 'loading') return <Loading what={what} />;
  if (value.state === 'error') return <ProblemMessage problem={value.problem} />;
  return <>{children(value.data)}</>;
}

export function StatusBadge({ status }: { status: string | null | undefined }) {
  return <span class={`badge status-${status ?? 'none'}`}>{statusLabel(status)}</span>;
}

export function Figures({ items, label }: { items: Array<[string, ComponentChildren]>; label: string }) {
  return (
    <dl class="figures" aria-label={label}>
      {items.map(([name, value]) => (
        <div class="figure" key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Pager({ page, hasNext, total, onPage }: { page: number; hasNext: boolean; total: number; onPage: (p: number) => void }) {
  if (page <= 1 && !hasNext) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span>
        Page {page} ({total} in all)
      </span>
      <button type="button" disabled={!hasNext} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}
