import { Injectable } from '@nestjs/common';
import { ProjectAccess } from '../../common/access/project-access';
import { AppException } from '../../common/errors/app-exception';
import { offsetOf, pageOf } from '../../common/pagination/page';
import { canonicalId } from '../../common/persistence/ids';
import {
  RevisionRef,
  revisionDiffResponse,
  RevisionSnapshotLike,
} from '../environments/revision-diff';
import {
  caseStats,
  rankFlaky,
  recentFromLetters,
  runIdsFromBase64,
  windowFromLetters,
} from './case-stats';
import { CHANGE_CLASSES } from './change-class';
import {
  CompareRunsQueryDto,
  CompareRunSummaryDto,
  EnvironmentDriftDto,
  RunComparisonDto,
} from './dto/compare.dto';
import {
  CaseHistoryDto,
  CaseHistoryQueryDto,
  FlakyCaseDto,
  FlakyPageDto,
  FlakyQueryDto,
} from './dto/history.dto';
import { ComparisonRow, InsightsRepository, RevisionRow, RunRow } from './insights.repository';
import { VersionedCache } from '../../common/cache/versioned-cache';

const iso = (value: string | Date | null): string | null =>
  value === null ? null : new Date(value).toISOString();

function toRunSummary(r: RunRow): CompareRunSummaryDto {
  return {
    id: r.id,
    name: r.name,
    build: r.build,
    status: r.status,
    environment_id: r.environment_id,
    environment_revision_number: r.environment_revision_number,
    created_at: r.created_at.toISOString(),
  };
}

function revisionRef(row: RevisionRow | undefined): RevisionRef | null {
  return row === undefined
    ? null
    : {
        revision_number: row.revision_number,
        snapshot_hash: row.snapshot_hash,
        full_snapshot: row.full_snapshot as RevisionSnapshotLike,
      };
}

@Injectable()
export class InsightsService {
  /** Flaky rankings by (project, window, environment, min_runs), each at one result version. */
  private readonly flakyCache = new VersionedCache<readonly RankedFlaky[]>(
    FLAKY_CACHE_BYTES,
    FLAKY_CACHE_ENTRIES,
  );

  /** Comparison pages by (run, base, classes, page), each at one result version. */
  private readonly compareCache = new VersionedCache<ComparisonRow>(
    COMPARE_CACHE_BYTES,
    COMPARE_CACHE_ENTRIES,
  );

  /** Revision diffs by (from, to) revision ids: immutable data. */
  private readonly diffCache = new VersionedCache<Record<string, unknown>>(
    DIFF_CACHE_BYTES,
    DIFF_CACHE_ENTRIES,
  );

  constructor(private readonly repo: InsightsRepository) {}

  /** §1: the comparison of run `runId` (already checked by the guard) with its base. */
  async compare(
    access: ProjectAccess,
    runId: string,
    q: CompareRunsQueryDto,
  ): Promise<RunComparisonDto> {
    const id = canonicalId(runId);
    const { run, base } = await this.runs(access, id, q);
    const changes = q.change?.length ? [...new Set(q.change)] : [...CHANGE_CLASSES];
    // One after the other: a request holds one pooled connection at a time.
    const cmp = await this.comparison(access.projectId, run.id, base.id, changes, q);
    const environment = await this.environmentDrift(run, base);
    const datasets = await this.repo.datasetDrift(run.id, base.id, access.projectId);
    const page = pageOf(cmp.items, q.page, q.page_size, cmp.total);
    return {
      run: toRunSummary(run),
      base: toRunSummary(base),
      counts: {
        added: cmp.added,
        removed: cmp.removed,
        newly_failing: cmp.newly_failing,
        fixed: cmp.fixed,
        still_failing: cmp.still_failing,
        unchanged: cmp.unchanged,
        changed: cmp.changed,
      },
      build_changed: run.build !== base.build,
      environment,
      datasets,
      items: page.items,
      total: page.total,
      page: page.page,
      page_size: page.page_size,
      has_next: page.has_next,
    };
  }

  /**
   * The counts and the page of the comparison, kept per (runs, classes, page) and version of the
   * project's results ({@link compareCache}): one statement reads the version and, only when it
   * is not the one held, the comparison.
   */
  private async comparison(
    projectId: string,
    runId: string,
    baseId: string,
    changes: string[],
    q: CompareRunsQueryDto,
  ): Promise<ComparisonRow> {
    const offset = offsetOf(q.page, q.page_size);
    const key = `${runId}|${baseId}|${[...changes].sort().join(',')}|${q.page_size}|${offset}`;
    const held = this.compareCache.peek(key);
    const read = await this.repo.compare(
      projectId,
      runId,
      baseId,
      changes,
      q.page_size,
      offset,
      held?.version ?? null,
    );
    if (read.result === null && held !== undefined) return held.value;
    const result = deepFreeze(read.result as ComparisonRow);
    this.compareCache.set(key, read.version, result, 256 + 2 * JSON.stringify(result).length);
    return result;
  }

  private async runs(
    access: ProjectAccess,
    id: string,
    q: CompareRunsQueryDto,
  ): Promise<{ run: RunRow; base: RunRow }> {
    if (q.base_run_id === undefined) {
      const [run, previous] = await this.repo.runAndPrevious(id);
      if (run === undefined) throw AppException.notFound('test_run_not_found', 'Test run');
      if (previous === undefined) {
        throw new AppException(
          'no_previous_run',
          run.environment_id === null
            ? 'No run without environment was created in this project before this run'
            : 'No run of the same environment was created in this project before this run',
        );
      }
      return { run, base: previous };
    }
    const baseId = canonicalId(q.base_run_id);
    const rows = await this.repo.runsById([id, baseId]);
    const run = rows.find((r) => r.id === id);
    const base = rows.find((r) => r.id === baseId);
    if (run === undefined) throw AppException.notFound('test_run_not_found', 'Test run');
    if (base === undefined) throw AppException.notFound('test_run_not_found', 'Base run');
    if (base.project_id !== access.projectId) {
      throw new AppException('run_project_mismatch', 'The base run belongs to another project', {
        'query.base_run_id': ['must be a run of the same project'],
      });
    }
    return { run, base };
  }

  private async environmentDrift(run: RunRow, base: RunRow): Promise<EnvironmentDriftDto> {
    const changed =
      run.environment_id !== base.environment_id ||
      run.environment_revision_number !== base.environment_revision_number;
    return {
      same_environment: run.environment_id === base.environment_id,
      from_revision: base.environment_revision_number,
      to_revision: run.environment_revision_number,
      changed,
      diff: await this.revisionDiff(base.environment_revision_id, run.environment_revision_id),
    };
  }

  /**
   * The diff from revision `fromId` to `toId` (null unless both exist). A revision's number,
   * hash and snapshot never change, so a diff is kept by its pair of ids ({@link diffCache}) and
   * the snapshots are read only for a pair not held.
   */
  private async revisionDiff(
    fromId: string | null,
    toId: string | null,
  ): Promise<Record<string, unknown> | null> {
    if (fromId === null || toId === null) return null;
    const key = `${fromId}|${toId}`;
    const held = this.diffCache.peek(key);
    if (held !== undefined) return held.value;
    const revisions = await this.repo.revisions([...new Set([fromId, toId])]);
    const from = revisionRef(revisions.find((r) => r.id === fromId));
    const to = revisionRef(revisions.find((r) => r.id === toId));
    if (from === null || to === null) return null;
    const diff = deepFreeze(revisionDiffResponse(from, to) as unknown as Record<string, unknown>);
    this.diffCache.set(key, IMMUTABLE, diff, 2 * JSON.stringify(diff).length);
    return diff;
  }

  /** §3: the case's history and the stats of its last `window` runs. */
  async history(caseId: string, q: CaseHistoryQueryDto): Promise<CaseHistoryDto> {
    const row = await this.repo.history(
      canonicalId(caseId),
      { environment_id: q.environment_id?.toLowerCase(), build: q.build },
      q.page_size,
      offsetOf(q.page, q.page_size),
      q.window,
    );
    const items = row.items.map((i) => ({
      ...i,
      finished_at: iso(i.finished_at),
      run_created_at: iso(i.run_created_at) as string,
    }));
    return {
      ...pageOf(items, q.page, q.page_size, row.total),
      stats: caseStats(row.stats_window),
    };
  }

  /**
   * §4: the project's flaky cases, ranked. The ranking of (project, window, environment,
   * min_runs) is kept per result version ({@link VersionedCache}): one statement reads the
   * version and, only when it is not the one held, the windows.
   */
  async flaky(access: ProjectAccess, q: FlakyQueryDto): Promise<FlakyPageDto> {
    const environmentId = q.environment_id?.toLowerCase();
    const key = `${access.projectId}|${q.window}|${environmentId ?? ''}|${q.min_runs}`;
    const held = this.flakyCache.peek(key);
    const read = await this.repo.flakyWindows(
      access.projectId,
      q.window,
      q.min_runs,
      environmentId,
      held?.version ?? null,
    );
    let ranked: readonly RankedFlaky[];
    if (read.windows === null && held !== undefined) {
      ranked = held.value;
    } else {
      ranked = rankFlaky(
        (read.windows ?? []).map((r) => ({
          test_case_id: r.test_case_id,
          title: r.title,
          ...caseStats(windowFromLetters(r.w, r.newest_failing_run)),
          w: r.w,
          r: r.r,
        })),
        q.min_runs,
      ).map((c) => ({
        test_case_id: c.test_case_id,
        title: c.title,
        runs: c.runs,
        passed: c.passed,
        failing: c.failing,
        flips: c.flips,
        flip_rate: c.flip_rate,
        flaky_attempts: c.flaky_attempts,
        last_status: c.last_status,
        last_failure_run_id: c.last_failure_run_id,
        w: c.w,
        r: c.r,
      }));
      this.flakyCache.set(key, read.version, deepFreeze(ranked), flakyBytes(ranked));
    }
    const offset = offsetOf(q.page, q.page_size);
    return pageOf(
      ranked.slice(offset, offset + q.page_size).map(toFlakyCase),
      q.page,
      q.page_size,
      ranked.length,
    );
  }
}

/**
 * A ranked flaky case as the cache holds it: its stats, and its window as read (`w` one letter per
 * run, `r` the run ids in base64, newest first), two short strings per case rather than one
 * object per run; a page's `recent` entries are built from them when it is answered.
 */
interface RankedFlaky extends Omit<FlakyCaseDto, 'recent'> {
  w: string;
  r: string;
}

/** A ranked case as the list answers it, its window as `recent`. */
function toFlakyCase(c: RankedFlaky): FlakyCaseDto {
  const { w, r, ...stats } = c;
  return {
    ...stats,
    recent: recentFromLetters(w, runIdsFromBase64(r)),
  };
}

/** Bound of the flaky list cache ({@link VersionedCache}), per process: 32 MiB. */
export const FLAKY_CACHE_BYTES = 32 * 1024 * 1024;
/** Most rankings the flaky list cache holds, per process. */
export const FLAKY_CACHE_ENTRIES = 256;

/** Bound of the comparison cache (counts and one page per entry), per process: 16 MiB. */
export const COMPARE_CACHE_BYTES = 16 * 1024 * 1024;
/** Most comparison pages the cache holds, per process. */
export const COMPARE_CACHE_ENTRIES = 1024;
/** Bound of the revision diff cache of the comparison, per process: 16 MiB. */
export const DIFF_CACHE_BYTES = 16 * 1024 * 1024;
/** Most revision diffs the comparison keeps, per process. */
export const DIFF_CACHE_ENTRIES = 512;
/** The version of entries that never change (a revision diff). */
const IMMUTABLE = 'immutable';

/** Freezes a JSON value and everything in it: a cached answer is shared by every response. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * About what a ranking takes in memory: a fixed cost per case plus its title (UTF-16) and its
 * window's two strings (`w`, `r`: ASCII, one byte a character in V8, plus a header each).
 */
export function flakyBytes(ranked: readonly RankedFlaky[]): number {
  let bytes = 64;
  for (const c of ranked) bytes += 400 + 2 * c.title.length + 32 + c.w.length + c.r.length;
  return bytes;
}
