import { Injectable } from '@nestjs/common';
import { likePattern } from '../../common/pagination/page';
import { Db } from '../../common/persistence/db.service';
import type { RunSummary } from '../test-runs/run-summary';
import type { MilestoneStatus } from './entities/milestone.entity';

/** A `milestones` row (dates as text, see COLUMNS): the one read shape of the table. */
export interface MilestoneRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  status: MilestoneStatus;
  start_date: string | null;
  target_date: string | null;
  completed_at: Date | null;
  owner_id: string | null;
  release_label: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  total?: number;
}

/** The figures of a milestone's summary: its plans, and its runs with their summed counters. */
export interface MilestoneSummaryRow extends Omit<RunSummary, 'total' | 'pass_rate'> {
  overdue: boolean;
  plans_total: number;
  planned_cases_total: number;
  runs_total: number;
  planned_runs: number;
  active_runs: number;
  completed_runs: number;
  archived_runs: number;
}

export interface MilestonePageQuery {
  projectId: string;
  statuses?: MilestoneStatus[];
  search?: string;
  limit: number;
  offset: number;
}

export interface NewMilestone {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  status: MilestoneStatus;
  startDate: string | null;
  targetDate: string | null;
  completedAt: Date | null;
  ownerId: string | null;
  releaseLabel: string | null;
  createdBy: string;
}

/** Columns a PATCH may set, by column name. */
export interface MilestonePatch {
  name?: string;
  description?: string | null;
  status?: MilestoneStatus;
  start_date?: string | null;
  target_date?: string | null;
  owner_id?: string | null;
  release_label?: string | null;
  completed_at?: Date | null;
}

/** The SET order of an update (code constants, never input). */
const PATCH_COLUMNS: readonly (keyof MilestonePatch)[] = [
  'name',
  'description',
  'status',
  'start_date',
  'target_date',
  'owner_id',
  'release_label',
  'completed_at',
];

/** Dates are read as text so that no time zone ever shifts a calendar date. */
const COLUMNS = `m.id, m.project_id, m.name, m.description, m.status,
  m.start_date::text AS start_date, m.target_date::text AS target_date, m.completed_at,
  m.owner_id, m.release_label, m.created_by, m.created_at, m.updated_at`;

@Injectable()
export class MilestonesRepository {
  constructor(private readonly db: Db) {}

  /**
   * One page (ordered by target date, soonest first, undated last) and the total, read from the
   * page's window count; a second count query only when the page is empty.
   */
  async page(q: MilestonePageQuery): Promise<{ rows: MilestoneRow[]; total: number }> {
    const where = ['m.project_id = $1'];
    const params: unknown[] = [q.projectId];
    if (q.statuses?.length) {
      params.push(q.statuses);
      where.push(`m.status = ANY($${params.length})`);
    }
    if (q.search) {
      params.push(likePattern(q.search));
      const p = `$${params.length}`;
      where.push(`(m.name ILIKE ${p} OR m.description ILIKE ${p} OR m.release_label ILIKE ${p})`);
    }
    params.push(q.limit, q.offset);
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total
         FROM milestones m
        WHERE ${where.join(' AND ')}
        ORDER BY m.target_date ASC NULLS LAST, m.created_at DESC, m.id DESC
        LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const total = rows[0]?.total ?? (await this.count(where, params.slice(0, -2)));
    return { rows, total };
  }

  private async count(where: string[], params: unknown[]): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM milestones m WHERE ${where.join(' AND ')}`,
      params,
    );
    return rows[0]?.n ?? 0;
  }

  async insert(m: NewMilestone): Promise<void> {
    await this.db.query(
      `INSERT INTO milestones (id, project_id, name, description, status, start_date, target_date,
                               completed_at, owner_id, release_label, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        m.id,
        m.projectId,
        m.name,
        m.description,
        m.status,
        m.startDate,
        m.targetDate,
        m.completedAt,
        m.ownerId,
        m.releaseLabel,
        m.createdBy,
      ],
    );
  }

  async findById(id: string): Promise<MilestoneRow | null> {
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS} FROM milestones m WHERE m.id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** The milestone, locked FOR UPDATE in the request's transaction. */
  async findByIdForUpdate(id: string): Promise<MilestoneRow | null> {
    const rows = await this.db.query<MilestoneRow>(
      `SELECT ${COLUMNS} FROM milestones m WHERE m.id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Sets the columns present in `patch` and `updated_at`; nothing at all when `patch` is empty. */
  async update(id: string, patch: MilestonePatch): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const column of PATCH_COLUMNS) {
      if (!(column in patch)) continue;
      params.push(patch[column]);
      sets.push(`${column} = $${params.length}`);
    }
    if (sets.length === 0) return;
    await this.db.query(
      `UPDATE milestones SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`,
      params,
    );
  }

  /** Deletes the milestone; runs (and plans) pointing at it lose the link (ON DELETE SET NULL). */
  async delete(id: string): Promise<void> {
    await this.db.query(`DELETE FROM milestones WHERE id = $1`, [id]);
  }

  /** The summary figures (one aggregate query), or `null` for an unknown milestone. */
  async summary(id: string): Promise<MilestoneSummaryRow | null> {
    const rows = await this.db.query<MilestoneSummaryRow>(
      `SELECT (m.target_date IS NOT NULL
                 AND m.target_date < (now() AT TIME ZONE 'UTC')::date
                 AND m.status NOT IN ('completed', 'archived')) AS overdue,
              (SELECT count(*) FROM test_plans p WHERE p.milestone_id = m.id)::int AS plans_total,
              (SELECT count(*) FROM test_plan_cases pc JOIN test_plans p ON p.id = pc.test_plan_id
                WHERE p.milestone_id = m.id)::int AS planned_cases_total,
              count(r.id)::int AS runs_total,
              count(r.id) FILTER (WHERE r.status = 'not_started')::int AS planned_runs,
              count(r.id) FILTER (WHERE r.status = 'in_progress')::int AS active_runs,
              count(r.id) FILTER (WHERE r.status = 'completed')::int AS completed_runs,
              count(r.id) FILTER (WHERE r.status = 'archived')::int AS archived_runs,
              coalesce(sum(r.count_untested), 0)::int AS untested,
              coalesce(sum(r.count_in_progress), 0)::int AS in_progress,
              coalesce(sum(r.count_passed), 0)::int AS passed,
              coalesce(sum(r.count_error), 0)::int AS error,
              coalesce(sum(r.count_failure), 0)::int AS failure,
              coalesce(sum(r.count_blocked), 0)::int AS blocked,
              coalesce(sum(r.count_skipped), 0)::int AS skipped,
              coalesce(sum(r.count_xfailed), 0)::int AS xfailed,
              coalesce(sum(r.count_xpassed), 0)::int AS xpassed
         FROM milestones m
         LEFT JOIN test_runs r ON r.milestone_id = m.id
        WHERE m.id = $1
        GROUP BY m.id`,
      [id],
    );
    return rows[0] ?? null;
  }
}
