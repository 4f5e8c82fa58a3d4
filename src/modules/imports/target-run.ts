/**
 * Pure rules of the project-level import's target run (reference runs-imports-plans.md §4.12).
 */
import { clipText } from './matching';

export const DEFAULT_RUN_NAME = 'JUnit Import';
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Name of the target run: the report's name (root `name`, else the first suite's), else the upload
 * file name without its extension, else `JUnit Import`; at most 255 characters.
 */
export function targetRunName(reportName: string | null, fileName: string | null): string {
  const fromReport = reportName?.trim() ?? '';
  if (fromReport !== '') return clipText(fromReport, 255);
  const base = (fileName ?? '').trim();
  const dot = base.lastIndexOf('.');
  const stem = (dot > 0 ? base.slice(0, dot) : base).trim();
  if (stem !== '') return clipText(stem, 255);
  return DEFAULT_RUN_NAME;
}

/**
 * Picks among open runs of that name (newest first): without a report timestamp the newest; with
 * one, among the runs created within ±24 h of it (all of them when none is) the closest in time.
 */
export function pickTargetRun<T extends { created_at: Date }>(
  candidates: readonly T[],
  timestamp: Date | null,
): T | null {
  if (candidates.length === 0) return null;
  if (timestamp === null) return candidates[0] ?? null;
  const at = timestamp.getTime();
  const near = candidates.filter((c) => Math.abs(c.created_at.getTime() - at) <= DAY_MS);
  const pool = near.length > 0 ? near : candidates;
  let best: T | null = null;
  for (const candidate of pool) {
    if (
      best === null ||
      Math.abs(candidate.created_at.getTime() - at) < Math.abs(best.created_at.getTime() - at)
    ) {
      best = candidate;
    }
  }
  return best;
}
