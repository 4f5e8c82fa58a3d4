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
  lastFailureRunId,
  rankFlaky,
  recentFromLetters,
  runIdsFromBase64,
  statsFromLetters,
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
import {
  ComparisonRow,
  FlakyRecentRow,
  FlakyWindowRow,
  InsightsRepository,
  RevisionRow,
  RunRow,
} from './insights.repository';
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

  /** Pages of flaky rankings (their `recent` windows), by ranking key and page, at one version. */
  private readonly flakyPageCache = new VersionedCache<readonly FlakyCaseDto[]>(
    FLAKY_PAGE_CACHE_BYTES,
    FLAKY_PAGE_CACHE_ENTRIES,
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
   * min_runs) is kept per result version ({@link flakyCache}), and so is each page answered with
   * its cases' windows ({@link flakyPageCache}). A held ranking costs one statement: the version
   * and, when the page is not held at it, the run ids of the page's windows. Otherwise the
   * ranking (the listed cases' letters, no run ids) and then its page's run ids are read in one
   * snapshot ({@link InsightsRepository.snapshot}), so they agree.
   */
  async flaky(access: ProjectAccess, q: FlakyQueryDto): Promise<FlakyPageDto> {
    const environmentId = q.environment_id?.toLowerCase();
    const key = `${access.projectId}|${q.window}|${environmentId ?? ''}|${q.min_runs}`;
    const offset = offsetOf(q.page, q.page_size);
    const pageKey = `${key}|${offset}|${q.page_size}`;
    const answer = (ranked: readonly RankedFlaky[], items: readonly FlakyCaseDto[]) =>
      pageOf([...items], q.page, q.page_size, ranked.length);

    const held = this.flakyCache.peek(key);
    if (held !== undefined) {
      const heldPage = this.flakyPageCache.peek(pageKey);
      const pageHeld = heldPage !== undefined && heldPage.version === held.version;
      const page = held.value.slice(offset, offset + q.page_size);
      const read = await this.repo.flakyRecent(
        access.projectId,
        q.window,
        environmentId,
        held.version,
        pageHeld ? [] : page.map((c) => c.test_case_id),
      );
      if (read.windows !== null) {
        if (pageHeld) return answer(held.value, heldPage.value);
        const items = pageItems(page, read.windows);
        this.flakyPageCache.set(pageKey, held.version, items, pageBytes(items));
        return answer(held.value, items);
      }
    }
    return this.repo.snapshot(async (read) => {
      const windows = await this.repo.flakyWindows(
        access.projectId,
        q.window,
        q.min_runs,
        environmentId,
        null,
        read,
      );
      const ranked = deepFreeze(rankWindows(windows.windows ?? [], q.min_runs));
      this.flakyCache.set(key, windows.version, ranked, flakyBytes(ranked));
      const page = ranked.slice(offset, offset + q.page_size);
      const recent = await this.repo.flakyRecent(
        access.projectId,
        q.window,
        environmentId,
        windows.version,
        page.map((c) => c.test_case_id),
        read,
      );
      const items = pageItems(page, recent.windows ?? []);
      this.flakyPageCache.set(pageKey, windows.version, items, pageBytes(items));
      return answer(ranked, items);
    });
  }
}

/**
 * A ranked flaky case as the cache holds it: its stats, without `last_failure_run_id` (null) and
 * `recent`, which a page fills in from its cases' windows ({@link pageItems}).
 */
type RankedFlaky = Omit<FlakyCaseDto, 'recent'>;

/** The listed windows ranked ({@link statsFromLetters}, {@link rankFlaky}). */
function rankWindows(windows: readonly FlakyWindowRow[], minRuns: number): RankedFlaky[] {
  return rankFlaky(
    windows.map((r) => ({
      test_case_id: r.test_case_id,
      title: r.title,
      ...statsFromLetters(r.w),
    })),
    minRuns,
  );
}

/**
 * A page's cases as the list answers them: each one's stats, its newest failing run and its
 * window as `recent`, from its window read at the ranking's version (`windows`).
 */
function pageItems(
  page: readonly RankedFlaky[],
  windows: readonly FlakyRecentRow[],
): readonly FlakyCaseDto[] {
  const byCase = new Map(windows.map((w) => [w.test_case_id, w]));
  return deepFreeze(
    page.map((c) => {
      const window = byCase.get(c.test_case_id);
      if (window === undefined) throw new Error(`no window read for ranked case ${c.test_case_id}`);
      const runIds = runIdsFromBase64(window.r);
      return {
        ...c,
        last_failure_run_id: lastFailureRunId(window.w, runIds),
        recent: recentFromLetters(window.w, runIds),
      };
    }),
  );
}

/** About what a page of the flaky list takes in memory (its JSON, UTF-16). */
function pageBytes(items: readonly FlakyCaseDto[]): number {
  return 256 + 2 * JSON.stringify(items).length;
}

/** Bound of the flaky list cache ({@link VersionedCache}), per process: 32 MiB. */
export const FLAKY_CACHE_BYTES = 32 * 1024 * 1024;
/** Most rankings the flaky list cache holds, per process. */
export const FLAKY_CACHE_ENTRIES = 256;
/** Bound of the cache of flaky list pages (with their cases' windows), per process: 8 MiB. */
export const FLAKY_PAGE_CACHE_BYTES = 8 * 1024 * 1024;
/** Most flaky list pages the cache holds, per process. */
export const FLAKY_PAGE_CACHE_ENTRIES = 1024;

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

/** About what a ranking takes in memory: a fixed cost per case plus its title (UTF-16). */
export function flakyBytes(ranked: readonly RankedFlaky[]): number {
  let bytes = 64;
  for (const c of ranked) bytes += 400 + 2 * c.title.length;
  return bytes;
}
