/** Pure display helpers (no DOM). */
import type { ChangeClass, ItemStatus, Problem } from './types';

const STATUS_LABELS: Record<string, string> = {
  passed: 'Passed',
  failure: 'Failed',
  error: 'Error',
  blocked: 'Blocked',
  skipped: 'Skipped',
  xfailed: 'Expected failure',
  xpassed: 'Unexpected pass',
  in_progress: 'In progress',
  untested: 'Untested',
  not_started: 'Not started',
  completed: 'Completed',
  archived: 'Archived',
};

export function statusLabel(status: string | null | undefined): string {
  if (!status) return '—';
  return STATUS_LABELS[status] ?? status.replace(/_/g, ' ');
}

/** Colours of results in charts and badges (each readable against white text or as a fill). */
export const STATUS_COLOURS: Record<ItemStatus, string> = {
  passed: '#1a7f37',
  failure: '#c62828',
  error: '#8e24aa',
  blocked: '#b35900',
  skipped: '#57606a',
  xfailed: '#0b6e99',
  xpassed: '#9a6700',
  in_progress: '#0550ae',
  untested: '#8c959f',
};

const CHANGE_LABELS: Record<ChangeClass, string> = {
  newly_failing: 'Newly failing',
  fixed: 'Fixed',
  still_failing: 'Still failing',
  added: 'Added',
  removed: 'Removed',
  changed: 'Changed',
  unchanged: 'Unchanged',
};

export function changeLabel(change: ChangeClass): string {
  return CHANGE_LABELS[change] ?? change;
}

/** Pass/fail outcome of a history square: failure and error fail, passed and xfailed pass. */
export function outcomeOf(status: string | null | undefined): 'pass' | 'fail' | 'other' {
  if (status === 'passed' || status === 'xfailed') return 'pass';
  if (status === 'failure' || status === 'error') return 'fail';
  return 'other';
}

export function percent(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return `${value.toFixed(digits)} %`;
}

/** A rate in 0..1 as a percentage. */
export function ratio(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return percent(value * 100, 0);
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** One sentence for a problem body: what went wrong, and the field messages of a 422. */
export function problemMessage(p: Problem): string {
  const parts = [p.detail && p.detail !== p.title ? `${p.title}: ${p.detail}` : p.title];
  if (p.errors) {
    for (const [field, messages] of Object.entries(p.errors)) parts.push(`${field}: ${messages.join(', ')}`);
  }
  return parts.join(' — ');
}

/** A JSON path of a diff change (`topology.system_under_test[0].nodes[1].region`). */
export function jsonPath(path: Array<string | number>): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${seg}` : seg;
  return out || '(root)';
}

export function shortValue(value: unknown): string {
  if (value === undefined) return '—';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s.length > 120 ? `${s.slice(0, 117)}…` : s;
}
